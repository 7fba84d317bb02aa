import Glibc
import Synchronization

/// Where a node's shells take time and chance from: the clock they read, the sleeps
/// their timers wait on, and the seeds of their random choices. One value, handed to
/// the `ClusterSystem` and from it to every shell built on it, so that a test or the
/// simulator can run the shells that ship under a clock it moves itself
/// (``VirtualClock``), as swift-nio's `EmbeddedEventLoop.advanceTime` does for channel
/// handlers. ``real`` is the behaviour of a node on a machine.
///
/// The invariant: no shell reads a clock or sleeps except through its runtime.
/// (Measurements that are about real time itself, a benchmark's or a log line's wall
/// time, read the real clocks directly.)
public struct Runtime: Sendable {
    public let clock: any RuntimeClock
    private let seeds: @Sendable () -> UInt64

    public init(clock: any RuntimeClock, seeds: @escaping @Sendable () -> UInt64) {
        self.clock = clock
        self.seeds = seeds
    }

    /// The machine's monotonic clock, `Task.sleep`, and seeds from the system's generator.
    public static let real = Runtime(clock: RealClock(), seeds: { UInt64.random(in: .min ... .max) })

    /// A runtime on `clock` whose seeds are drawn from `seed`, the same every run.
    public static func virtual(_ clock: VirtualClock, seed: UInt64 = 1) -> Runtime {
        let generator = SeedSequence(seed)
        return Runtime(clock: clock, seeds: { generator.next() })
    }

    /// Seconds on this runtime's monotonic clock.
    public var now: Double { clock.now }

    /// Suspends for `seconds` of this runtime's time (at least nothing); throws
    /// `CancellationError` if the task is cancelled first.
    public func sleep(for seconds: Double) async throws {
        try await clock.sleep(for: seconds)
    }

    /// A seed for a random generator of a shell's own (an election timeout's, a probe's).
    public func seed() -> UInt64 { seeds() }
}

/// A monotonic clock a shell can read and sleep on.
public protocol RuntimeClock: Sendable {
    /// Seconds since an arbitrary start; never goes back.
    var now: Double { get }
    /// Suspends for `seconds`; throws `CancellationError` if the task is cancelled first.
    func sleep(for seconds: Double) async throws
}

/// `CLOCK_MONOTONIC` and `Task.sleep`: the clock of a node on a machine. Not affected by
/// changes of the wall clock, and the same in every process of a machine.
public struct RealClock: RuntimeClock {
    public init() {}

    public var now: Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    public func sleep(for seconds: Double) async throws {
        guard seconds > 0 else { return try Task.checkCancellation() }
        try await Task.sleep(nanoseconds: UInt64(min(seconds, 1e9) * 1e9))
    }
}

/// splitmix64 behind a lock: the seeds of a virtual runtime.
private final class SeedSequence: Sendable {
    private let state: Mutex<UInt64>

    init(_ seed: UInt64) { state = Mutex(seed) }

    func next() -> UInt64 {
        state.withLock { state in
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }
}
