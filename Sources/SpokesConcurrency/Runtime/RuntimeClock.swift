import Dispatch
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
    /// Runs `action` once `seconds` have passed on this clock, unless the timer is
    /// cancelled first: a deadline (``TimeoutTask``'s). The default is a task asleep on
    /// ``sleep(for:)``; ``RealClock`` keeps every deadline on one thread instead
    /// (``DeadlineTimer``), which costs no task and no Dispatch timer per deadline.
    func startTimer(after seconds: Double, _ action: @escaping @Sendable () -> Void) -> ClockTimer
}

extension RuntimeClock {
    /// A task asleep on ``sleep(for:)`` that runs `action` unless cancelled first: what a
    /// deadline was before ``DeadlineTimer``. ``RealClock`` and ``VirtualClock`` keep
    /// their deadlines without a task each; this is for a clock that has no such list.
    public func startTimer(after seconds: Double, _ action: @escaping @Sendable () -> Void) -> ClockTimer {
        ClockTimer(.task(Task {
            guard (try? await sleep(for: seconds)) != nil else { return }
            action()
        }))
    }
}

/// A deadline armed with ``RuntimeClock/startTimer(after:_:)``: ``cancel()`` disarms it.
public struct ClockTimer: Sendable {
    enum Kind: Sendable {
        case task(Task<Void, Never>)
        case deadline(DeadlineTimer, DeadlineTimer.Token)
        /// A deadline of a ``VirtualClock`` (``VirtualClock/schedule(after:group:_:)``).
        case virtual(VirtualClock, Int)
        /// A deadline its clock takes back by calling this (a clock of another module).
        case cancelling(@Sendable () -> Void)
    }

    let kind: Kind

    init(_ kind: Kind) { self.kind = kind }

    /// A deadline that `cancel` takes back: a clock of another module's own.
    public static func cancelling(_ cancel: @escaping @Sendable () -> Void) -> ClockTimer {
        ClockTimer(.cancelling(cancel))
    }

    /// Disarms the deadline: its action does not run unless it has already begun to.
    public func cancel() {
        switch kind {
        case .task(let task): task.cancel()
        case .deadline(let timer, let token): timer.cancel(token)
        case .virtual(let clock, let order): clock.cancelScheduled(order)
        case .cancelling(let cancel): cancel()
        }
    }
}

/// `CLOCK_MONOTONIC` and `Task.sleep`: the clock of a node on a machine. Not affected by
/// changes of the wall clock, and the same in every process of a machine.
public struct RealClock: RuntimeClock {
    public init() {}

    /// The system clock ``now`` reads: what a thread's timed wait must be measured on
    /// (``CriticalSection`` sets its condition variable to it) so its deadlines agree.
    public static let monotonicClockID = CLOCK_MONOTONIC

    public var now: Double {
        var time = timespec()
        clock_gettime(Self.monotonicClockID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    public var unixNow: Double {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    public func sleep(for seconds: Double) async throws {
        guard seconds > 0 else { return try Task.checkCancellation() }
        SimulationExecutor.noteRealTimeWait("a task slept \(seconds) s on the machine's clock (RealClock)")
        try await Task.sleep(nanoseconds: UInt64(min(seconds, 1e9) * 1e9))
    }

    /// Blocks the calling thread for `seconds`. Only for a thread of the real transport's
    /// own that must wait without a task (the listener's accept thread while the process
    /// has no descriptor left); never on the cooperative pool.
    public func pauseThread(for seconds: Double) {
        guard seconds > 0 else { return }
        let whole = min(seconds, 1e9).rounded(.down)
        var left = timespec(tv_sec: Int(whole), tv_nsec: Int((min(seconds, 1e9) - whole) * 1e9))
        var asked = left
        // Interrupted by a signal: sleep again for what is left.
        while nanosleep(&asked, &left) != 0, errno == EINTR { asked = left }
    }

    /// A deadline of the process's ``DeadlineTimer/shared`` thread: no task and no
    /// Dispatch timer per deadline (BENCHMARKS.md, "A deadline without a task").
    public func startTimer(after seconds: Double, _ action: @escaping @Sendable () -> Void) -> ClockTimer {
        SimulationExecutor.noteRealTimeWait("a deadline of \(seconds) s was set on the machine's clock (RealClock)")
        let timer = DeadlineTimer.shared
        return ClockTimer(.deadline(timer, timer.schedule(after: seconds, action)))
    }
}

extension RealClock {
    /// A deadline for a thread's timed wait on a condition variable set to
    /// ``monotonicClockID`` (``CriticalSection``'s): `CLOCK_MONOTONIC`, which never jumps
    /// when the wall clock is adjusted, in whole nanoseconds.
    public struct ThreadDeadline: Sendable {
        let nanoseconds: Int64

        /// `seconds` from now, clamped as ``Duration/clamped(seconds:)`` clamps (NaN and
        /// negative values are zero, at most about 31.7 years), so nothing overflows.
        public init(after seconds: Double) {
            let (whole, attoseconds) = Duration.clamped(seconds: seconds).components
            nanoseconds = Int64(RealClock().now * 1e9) + whole * 1_000_000_000 + attoseconds / 1_000_000_000
        }
    }

    /// Waits on `condition` (with `mutex` held) until it is signalled or `deadline`
    /// passes: the runtime's one timed wait of a thread. Returns false once the deadline
    /// has passed; a spurious wake-up returns true.
    public static func wait(
        on condition: UnsafeMutablePointer<pthread_cond_t>, holding mutex: UnsafeMutablePointer<pthread_mutex_t>, until deadline: ThreadDeadline
    ) -> Bool {
        #if canImport(Darwin)
        let remaining = deadline.nanoseconds - Int64(RealClock().now * 1e9)
        guard remaining > 0 else { return false }
        var relative = timespec(tv_sec: Int(remaining / 1_000_000_000), tv_nsec: Int(remaining % 1_000_000_000))
        return pthread_cond_timedwait_relative_np(condition, mutex, &relative) != ETIMEDOUT
        #else
        var absolute = timespec(tv_sec: Int(deadline.nanoseconds / 1_000_000_000), tv_nsec: Int(deadline.nanoseconds % 1_000_000_000))
        return pthread_cond_timedwait(condition, mutex, &absolute) != ETIMEDOUT
        #endif
    }
}

extension RealClock {
    /// Blocks the calling thread on `wake` until it is signalled or this clock reaches
    /// `deadline` (at most an hour at a time; without a deadline, until signalled): how
    /// the runtime's own threads (``DeadlineTimer``, ``ProtocolExecutor``) wait for their
    /// next deadline. Never on the cooperative pool.
    static func wait(on wake: DispatchSemaphore, until deadline: Double?) {
        guard let deadline, deadline.isFinite else { return wake.wait() }
        let nanoseconds = Int(min(max(deadline - RealClock().now, 0), 3_600) * 1e9)
        _ = wake.wait(timeout: .now() + .nanoseconds(nanoseconds))
    }
}
