import Glibc

/// A monotonic clock a shell can read and sleep on: the time part of a node's runtime
/// (`Runtime` in SpokesTransport). ``RealClock`` on a machine, ``VirtualClock`` in tests
/// and the simulator.
public protocol RuntimeClock: Sendable {
    /// Seconds since an arbitrary start; never goes back.
    var now: Double { get }
    /// Seconds since 1970 (UTC): the wall clock, for what is compared across machines or
    /// shown to people (a beacon's time, a job's start). May jump; never measure with it.
    var unixNow: Double { get }
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

    public var unixNow: Double {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    public func sleep(for seconds: Double) async throws {
        guard seconds > 0 else { return try Task.checkCancellation() }
        try await Task.sleep(nanoseconds: UInt64(min(seconds, 1e9) * 1e9))
    }
}
