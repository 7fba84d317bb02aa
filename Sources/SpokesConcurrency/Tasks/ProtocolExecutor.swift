import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// A thread of its own that runs async work and wakes its sleepers: where a node's own
/// protocol work runs (heartbeats, membership and probe ticks, Raft ticks and messages),
/// so it never waits behind user tasks on the cooperative pool.
///
/// Why: on Linux the cooperative pool is about one thread per core, and every user
/// task, every incoming call and every `Task.sleep` wake-up queue there. Measured on 2
/// cores with 8,000 real-time bike users on 3 nodes, a node's timers ran 1.1 s late,
/// and its Raft group lost its leader to a take-over (issue 33). Here a timer's wake-up
/// and the work after it need no pool thread: the operating system shares the cores
/// between this thread and the pool's, so the protocol waits milliseconds, not the
/// pool's backlog.
///
/// It is a `TaskExecutor`: a task made with `Task(executorPreference:)` runs its
/// nonisolated code, and the default actors it calls, here (``run(_:)``); its child
/// tasks too, but not the unstructured tasks it makes. It is a `SerialExecutor` too:
/// one job at a time, in the order given. ``sleep(for:)`` is a timer of this thread:
/// the sleeper is resumed from here, and a task that prefers this executor goes on
/// here, so no pool thread is needed for a tick. Work given to it must not block
/// (blocking calls still go through `runBlocking`), and must be short: it delays every
/// other node's protocol in the process.
///
/// The thread lives as long as the process (one for ``Runtime``'s real runtime).
public final class ProtocolExecutor: SerialExecutor, TaskExecutor, Sendable {
    /// A sleeper from ``sleep(for:)`` until it is woken or cancelled.
    private enum Sleeper {
        /// Its id is taken; its continuation is not registered yet.
        case starting
        /// Cancelled before it registered: it throws as it registers.
        case cancelled
        case waiting(CheckedContinuation<Void, any Error>)
    }

    private struct State {
        var jobs: [UnownedJob] = []
        var sleepers: [UInt64: Sleeper] = [:]
        /// The waiting sleepers' deadlines, the earliest first.
        var deadlines: [(deadline: Double, id: UInt64)] = []
        var nextSleeper: UInt64 = 0
        /// The thread is about to wait, or waits: whoever gives it work signals `wake`.
        var idle = false
    }

    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    /// The thread's `pthread_t`, for ``checkIsolated()``.
    private let thread = Atomic<UInt>(0)
    /// The thread's name (`top -H`, `perf`).
    public let name: String

    /// Starts the thread, named `name`.
    public init(name: String) {
        self.name = name
        let started = DispatchSemaphore(value: 0)
        PlainThread.start(name: name) { [self] in
            thread.store(UInt(pthread_self()), ordering: .releasing)
            started.signal()
            run()
        }
        started.wait()
    }

    /// The thread's loop: wake the sleepers that are due, run the jobs given, and wait
    /// for more or for the next deadline.
    private func run() {
        let unowned = asUnownedSerialExecutor()
        let task = asUnownedTaskExecutor()
        while true {
            let now = Self.now
            let (jobs, due, nextDeadline) = state.withLock { state -> ([UnownedJob], [CheckedContinuation<Void, any Error>], Double?) in
                let dueCount = state.deadlines.prefix { $0.deadline <= now }.count
                let due = state.deadlines.prefix(dueCount).compactMap { entry -> CheckedContinuation<Void, any Error>? in
                    guard case .waiting(let continuation) = state.sleepers.removeValue(forKey: entry.id) else { return nil }
                    return continuation
                }
                state.deadlines.removeFirst(dueCount)
                let jobs = state.jobs
                state.jobs.removeAll(keepingCapacity: true)
                if jobs.isEmpty, due.isEmpty { state.idle = true }
                return (jobs, due, state.deadlines.first?.deadline)
            }
            for continuation in due { continuation.resume() }
            for job in jobs { job.runSynchronously(isolatedTo: unowned, taskExecutor: task) }
            guard jobs.isEmpty, due.isEmpty else { continue }
            RealClock.wait(on: wake, until: nextDeadline)
            state.withLock { $0.idle = false }
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let signal = state.withLock { state in
            state.jobs.append(job)
            defer { state.idle = false }
            return state.idle
        }
        if signal { wake.signal() }
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Whether the caller runs on this executor's thread.
    public var isCurrentThread: Bool {
        pthread_self() == pthread_t(thread.load(ordering: .acquiring))
    }

    public func checkIsolated() {
        precondition(isCurrentThread, "not on the \(name) thread")
    }

    /// Suspends for `seconds`, woken by this thread (the wake-up needs no pool thread);
    /// throws `CancellationError` if the task is cancelled first. At least nothing:
    /// negative, zero and NaN return at once; at most a year.
    public func sleep(for seconds: Double) async throws {
        guard seconds > 0 else { return try Task.checkCancellation() }
        let deadline = Self.now + min(seconds, 31_536_000)
        let id = state.withLock { state in
            defer { state.nextSleeper &+= 1 }
            state.sleepers[state.nextSleeper] = .starting
            return state.nextSleeper
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (cancelled, signal) = state.withLock { state -> (Bool, Bool) in
                    if case .cancelled? = state.sleepers[id] {
                        state.sleepers[id] = nil
                        return (true, false)
                    }
                    state.sleepers[id] = .waiting(continuation)
                    let index = state.deadlines.firstIndex { $0.deadline > deadline } ?? state.deadlines.endIndex
                    state.deadlines.insert((deadline, id), at: index)
                    // The thread waits for a later deadline (or none): tell it of this one.
                    guard index == 0, state.idle else { return (false, false) }
                    state.idle = false
                    return (false, true)
                }
                if cancelled { continuation.resume(throwing: CancellationError()) }
                if signal { wake.signal() }
            }
        } onCancel: {
            let waiting = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                switch state.sleepers[id] {
                case .starting?:
                    state.sleepers[id] = .cancelled
                    return nil
                case .waiting(let continuation)?:
                    state.sleepers[id] = nil
                    state.deadlines.removeAll { $0.id == id }
                    return continuation
                case .cancelled?, nil:
                    // Woken already (or cancelled twice): nothing to do.
                    return nil
                }
            }
            waiting?.resume(throwing: CancellationError())
        }
    }

    /// Seconds on the machine's clock (``RealClock``): one reading of `CLOCK_MONOTONIC` for
    /// the whole runtime.
    private static var now: Double { RealClock().now }
}
