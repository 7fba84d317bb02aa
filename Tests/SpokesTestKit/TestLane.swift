import Glibc
import SpokesConcurrency
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

/// Runs each test of a suite (or one test) that drives a `SimulatedCluster` inside
/// ``SimulationExecutor/runInTurn(_:)``: in its own task, every job of the process on one
/// thread, so the cluster's `settle()` knows when the nodes are quiet instead of guessing.
/// Such tests take turns (one drain at a time, first come first served); the others run
/// beside them, their jobs on that thread meanwhile. A cluster made without it throws
/// `OutsideSimulation`, naming this trait.
///
/// In the process lane it does nothing: its tests use real time, sockets and threads
/// (and none drives a simulated cluster), so a suite that mixes both lanes may carry it.
public struct SimulatedTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    /// Each test case, not the suite as a whole: a suite's tests take turns one by one.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil || TestLane.isProcessLane ? nil : self
    }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        try await SimulationExecutor.runInTurn(function)
    }
}

extension Trait where Self == SimulatedTrait {
    /// Marks a suite or test whose simulated clusters run under exact quiescence
    /// (``SimulatedTrait``).
    public static var simulated: Self { Self() }
}

extension Trait where Self == TimeLimitTrait {
    /// A unit-lane test's guard against a hang, not a bound on its speed: the lane asserts
    /// no wall-clock time. Tests of whole nodes in virtual time take turns on one thread
    /// (``SimulatedTrait``), and on a loaded 2-core machine a test waited and ran for
    /// minutes of real time (before the turns: 40 to 175 s for a few seconds alone); ten
    /// minutes still turns a hang into a failure, well inside CI's bound.
    public static var hangGuard: Self { .timeLimit(.minutes(10)) }
}
