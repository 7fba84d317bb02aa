import Glibc
import Testing

/// The two test lanes (ARCHITECTURE.md, "Tests").
///
/// - The **unit lane** is what `swift test` runs: pure tests and the deterministic
///   simulator. Nothing in it waits for real time to pass or measures it, starts a child
///   process or needs a cluster of real sockets, so it passes the same on an idle machine
///   and on a loaded one.
/// - The **process lane** holds the tests that need real time, real sockets between
///   nodes or real processes (in-process clusters over loopback, `kill -9`, restarts).
///   `Scripts/test-processes` runs it, one test at a time, with `SPOKES_TEST_LANE=processes`;
///   `swift test` alone lists those tests as skipped.
///
/// The invariant: a test that reads a clock, sleeps or waits for a socket is in the
/// process lane, until its shell takes that from the simulated runtime.
public enum TestLane {
    /// The environment variable that selects the process lane.
    public static let variable = "SPOKES_TEST_LANE"

    /// True when this test process runs the process lane.
    public static var isProcessLane: Bool {
        guard let value = getenv(variable) else { return false }
        return String(cString: value) == "processes"
    }
}

extension Trait where Self == ConditionTrait {
    /// Marks a suite or test of the process lane: it runs only under
    /// `Scripts/test-processes` (real time, sockets or child processes).
    public static var processLane: Self {
        .enabled(if: TestLane.isProcessLane, "process lane: real time, sockets or child processes (Scripts/test-processes runs it)")
    }
}

extension Trait where Self == TimeLimitTrait {
    /// A unit-lane test's guard against a hang, not a bound on its speed: the lane asserts
    /// no wall-clock time. A test of whole nodes in virtual time shares the cooperative
    /// pool with every other test of the run, so on a loaded 2-core machine it took 40 to
    /// 175 s of real time for a few seconds alone (and failed a one-minute limit, 2 runs
    /// of 5 at load 8 to 11); ten minutes still turns a hang into a failure, well inside
    /// CI's bound.
    public static var hangGuard: Self { .timeLimit(.minutes(10)) }
}
