import Dispatch
import Glibc
import Synchronization

/// Runs every task of the process on one thread, one job at a time, in the order the jobs
/// became ready: the simulator's kernel for whole nodes (issue 28 §2), as FoundationDB runs
/// a simulated cluster's every process on one thread.
///
/// Why: on the cooperative pool, tasks run on several threads at once, so a driver could
/// only guess when the nodes have done what a step of virtual time woke (it turned the
/// pool and watched the threads: "quiet as observed, not a proof"), and two runs of one
/// seed interleave differently. Here the driver knows: when no other job is ready
/// (``untilIdle()`` returns), every task of every node is asleep on the virtual clock or waits
/// for a message, so time may move. And with the same inputs the jobs run in the same
/// order, so a seed's run is the same every time (given deterministic hashing:
/// `SWIFT_DETERMINISTIC_HASHING=1`, which `Scripts/simulate-cluster` sets).
///
/// How: the Swift runtime's `swift_task_enqueueGlobal_hook`, a documented hook of the
/// concurrency runtime (the one test libraries use to run tasks serially), sends every job
/// bound for the global concurrent executor (a task that runs no actor, a default actor's
/// turn) to this queue while a drain (``run(_:)``, ``runInTurn(_:)``) runs them on its
/// thread. Jobs of custom executors (the main actor, a ``ProtocolExecutor``) and delayed
/// jobs (a real `Task.sleep`) do not pass through it: a simulated node has neither.
/// Blocking work (``runBlocking(_:_:)``) runs inline while the executor drains: a
/// simulated node's blocking calls are on its in-memory disk, and a thread of their own
/// would run beside the queue, unseen by ``untilIdle()``.
///
/// Tests take turns (``runInTurn(_:)``): the hook is the process's, so while one drains,
/// the jobs of every other test running in parallel run on its thread too. That keeps
/// ``untilIdle()`` exact (nothing ready anywhere means nothing ready in the simulation, and
/// those jobs are run, not lost); they only wait behind one another, as on a pool of one
/// thread. Only the drain's own tasks (``isCurrent``) run blocking work inline and charge
/// a slow disk's latency: another test's blocking work still gets a thread of its own, and
/// its slow disk still waits. A job that blocks its thread until another task runs would
/// stall the drain: such waits belong on threads of their own (the unit lane's are,
/// `Threads.run`).
public enum SimulationExecutor {
    /// What the runtime passes the hook: the default enqueue, which the hook may call.
    private typealias Original = @convention(thin) (UnownedJob) -> Void
    private typealias Hook = @convention(thin) (UnownedJob, Original) -> Void

    private struct State {
        /// Jobs go to ``jobs`` (not to the runtime's pool) only while true: set and cleared
        /// under the lock, so a thread that read the hook just before it was cleared still
        /// hands its job to the pool instead of leaving it in a queue nobody drains.
        var active = false
        var jobs: [Ready] = []
        /// Where the next job to run is in ``jobs`` (jobs before it have run).
        var next = 0
        /// The draining thread waits for a job: whoever adds one signals ``wake``.
        var waiting = false
        var jobsRun = 0
        /// Tasks in ``untilIdle()``, resumed one at a time, first come first, whenever no
        /// job is ready.
        var idleWaiters: [(continuation: CheckedContinuation<Bool, Never>, since: Int)] = []
    }

    private static let state = Mutex(State())
    private static let wake = DispatchSemaphore(value: 0)
    private static let draining = Atomic<Bool>(false)
    /// Set to end the drain that runs now (read by the draining thread between two jobs).
    private static let ended = Atomic<Bool>(false)
    /// The draining thread's `pthread_t` (0 while none drains).
    private static let drainer = Atomic<UInt>(0)
    /// The runtime's own enqueue, as the hook last received it: where jobs left ready at
    /// the end go.
    private static let original = Mutex<Original?>(nil)

    /// The address of the runtime's hook variable, found by name in the process (nil
    /// where the runtime does not export it: every Swift 6 runtime on Linux does; without
    /// it nothing can be simulated exactly, and a drain stops the process saying so). Kept
    /// as a number, a value; ``hook`` makes the pointer.
    private static let hookAddress: UInt? = dlsym(dlopen(nil, RTLD_NOW), "swift_task_enqueueGlobal_hook").map { UInt(bitPattern: $0) }

    /// The runtime's hook variable. The runtime reads it, unsynchronised, on every
    /// enqueue of every thread, as its hooks are meant to be used (a pointer-sized,
    /// aligned store: a thread sees the old hook or the new one). A drain sets it before
    /// its first job and clears it after its last; a thread that read it just before
    /// either still has its job run (``State/active``).
    private static var hook: UnsafeMutablePointer<Hook?>? {
        hookAddress.flatMap { UnsafeMutablePointer<Hook?>(bitPattern: $0) }
    }

    /// True in the task a drain runs (``run(_:)``'s operation, ``runInTurn(_:)``'s caller
    /// during its operation) and in every task it starts (task-locals are inherited).
    @TaskLocal private static var insideDrain = false

    /// Whether the caller is a task of the drain that runs now, on its thread: where a
    /// simulation may be driven (``untilIdle()`` is exact). False in a task of another
    /// test whose job the drain merely runs, and anywhere off the draining thread.
    public static var isCurrent: Bool { insideDrain && isDrainingThread }

    /// Returns when no job but the caller's is ready to run: every other task of the
    /// process waits (on a clock, a message, a continuation), so nothing happens until
    /// the caller moves time or sends something. For a driver inside a drain; elsewhere
    /// it returns at once. (Not `Task.yield()` in a loop: the runtime sends a yield's job
    /// to its own pool, past the hook, so the driver would come back at a time that
    /// depends on the threads.) False when other jobs ran ``patience`` times without a
    /// pause: a task that never waits, which is a failure of its own.
    public static func untilIdle() async -> Bool {
        guard isDrainingThread else { return true }
        return await withCheckedContinuation { continuation in
            state.withLock { $0.idleWaiters.append((continuation, $0.jobsRun)) }
        }
    }

    /// Runs `action` as a job of the drain that runs now, in turn with the tasks' jobs but
    /// with no task of its own: where a task would only be resumed to call a callback (the
    /// simulated network's deliveries, `SimulatedInbox`: a reader task resumed per chunk
    /// and datagram was about half of a simulated cluster's jobs). It runs with the drain's
    /// task-locals, so a task it starts is one of the drain's own (``isCurrent``). Called
    /// anywhere else (not from a task of the drain that runs now), it runs on a task of its
    /// own.
    public static func perform(_ action: @escaping @Sendable () -> Void) {
        if isCurrent {
            let queued = state.withLock { state -> Bool in
                guard state.active else { return false }
                state.jobs.append(.action(action))
                return true
            }
            if queued { return }
        }
        Task { action() }
    }

    /// A job of a task, or an action (``perform(_:)``).
    private enum Ready {
        case job(UnownedJob)
        case action(@Sendable () -> Void)
    }

    /// How many jobs may run while a task waits in ``untilIdle()`` (minutes of work).
    public static let patience = 50_000_000

    /// Jobs run by drains so far in this process.
    public static var jobsRun: Int { state.withLock { $0.jobsRun } }

    /// Runs `operation` with every job of the global executor run on the calling thread
    /// (which waits, so it must not be a thread of the cooperative pool: the simulator's
    /// `main`), until `operation` ends; returns what it returned. Jobs still ready when it
    /// ends go back to the pool. Only one drain at a time: async callers (tests) use
    /// ``runInTurn(_:)``, which waits its turn.
    public static func run<Value: Sendable>(_ operation: @escaping @Sendable () async -> Value) -> Value {
        let result = Slot<Value>()
        drainHere {
            Task.detached {
                let value = await $insideDrain.withValue(true) { await operation() }
                result.value.withLock { $0 = value }
                SimulationExecutor.endDrain()
            }
        }
        return result.value.withLock { $0! }
    }

    /// Where ``run(_:)``'s operation leaves its value for the draining thread.
    private final class Slot<Value: Sendable>: Sendable {
        let value = Mutex<Value?>(nil)
    }

    /// Runs `operation` in the caller's own task (its task-locals, cancellation and
    /// priority kept: a test's issues are recorded against it) with every job of the
    /// process drained by a thread started for it, as ``run(_:)`` drains on the
    /// simulator's `main`; returns what it returned, throws what it threw. Callers take
    /// turns, first come first served, since only one drain may run at a time: how a
    /// unit test runs a simulated cluster (`.simulated` in `SpokesTestKit`).
    ///
    /// The task hops onto the draining thread (a task resumed while the hook is set is
    /// queued there) before `operation` starts, and back to the pool after it ended (the
    /// thread resumes it once the hook is cleared). `operation` must not block its thread on
    /// something another task does: that task's job waits for the same thread.
    public static func runInTurn<Value>(_ operation: () async throws -> Value) async throws -> Value {
        await takeTurn()
        defer { passTurn() }
        let finished = Mutex<CheckedContinuation<Void, Never>?>(nil)
        await withCheckedContinuation { (started: CheckedContinuation<Void, Never>) in
            PlainThread.start(name: "simulation") {
                drainHere { started.resume() }
                finished.withLock { $0.take() }?.resume()
            }
        }
        // The hook is set: a task resumed now is queued for the draining thread, unless it
        // is resumed before it even suspended (then it goes on where it was, and tries again).
        while !isDrainingThread {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                Task { continuation.resume() }
            }
        }
        let result: Result<Value, any Error>
        do {
            result = .success(try await $insideDrain.withValue(true) { try await operation() })
        } catch {
            result = .failure(error)
        }
        // Inside this job the drain cannot yet see its end: the continuation is kept
        // before this task suspends and the thread resumes it.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            finished.withLock { $0 = continuation }
            endDrain()
        }
        return try result.get()
    }

    /// Callers of ``runInTurn(_:)`` waiting for theirs, first come first; `taken` while
    /// one runs.
    private static let turns = Mutex<(taken: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    private static func takeTurn() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = turns.withLock { turns in
                guard turns.taken else {
                    turns.taken = true
                    return true
                }
                turns.waiting.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    private static func passTurn() {
        let next = turns.withLock { turns -> CheckedContinuation<Void, Never>? in
            guard !turns.waiting.isEmpty else {
                turns.taken = false
                return nil
            }
            return turns.waiting.removeFirst()
        }
        next?.resume()
    }

    /// Ends the drain that runs now after the job running now, waking the draining thread
    /// if it waits. Every signal of ``wake`` answers one wait: the drainer decides to wait
    /// under the lock, after reading ``ended``, so a drain that ends never leaves a signal
    /// behind to wake a later drain early.
    private static func endDrain() {
        ended.store(true, ordering: .releasing)
        let waits = SimulationExecutor.state.withLock { state in
            defer { state.waiting = false }
            return state.waiting
        }
        if waits { SimulationExecutor.wake.signal() }
    }

    /// Drains on the calling thread: sets the hook, calls `start` (which makes the first
    /// job ready), runs jobs one at a time until ``endDrain()``, then clears the hook and
    /// hands what is still ready to the pool.
    private static func drainHere(_ start: @Sendable () -> Void) {
        guard let hook else { preconditionFailure("SimulationExecutor: this Swift runtime exports no swift_task_enqueueGlobal_hook") }
        precondition(!draining.exchange(true, ordering: .acquiringAndReleasing), "SimulationExecutor is already draining")
        ended.store(false, ordering: .releasing)
        // A wait noted in an earlier drain whose driver never took it is not this one's.
        realTimeWait.withLock { $0 = nil }
        drainer.store(UInt(pthread_self()), ordering: .releasing)
        state.withLock { $0.active = true }
        hook.pointee = { job, original in SimulationExecutor.enqueue(job, original: original) }
        start()
        // The generic executor (no actor, no executor of its own), as the runtime's own
        // global executor passes it: `SerialExecutorRef::generic()`, two null words.
        let generic = unsafeBitCast((Int(0), Int(0)), to: UnownedSerialExecutor.self)
        // What runs here outside a task (an action, ``perform(_:)``) is the drain's, and so
        // is a task it starts: task-locals set outside any task are the thread's, and a new
        // task inherits them.
        $insideDrain.withValue(true) {
            while !ended.load(ordering: .acquiring) {
                let next = state.withLock { state -> Next in
                    guard state.next < state.jobs.count else {
                        state.jobs.removeAll(keepingCapacity: true)
                        state.next = 0
                        if !state.idleWaiters.isEmpty { return .idle(state.idleWaiters.removeFirst().continuation, true) }
                        if ended.load(ordering: .acquiring) { return .end }
                        state.waiting = true
                        return .wait
                    }
                    if state.jobsRun & 0xFFFF == 0, let first = state.idleWaiters.first, state.jobsRun - first.since > patience {
                        state.idleWaiters.removeFirst()
                        return .idle(first.continuation, false)
                    }
                    defer {
                        state.next += 1
                        state.jobsRun += 1
                    }
                    return .job(state.jobs[state.next])
                }
                switch next {
                case .job(.job(let job)):
                    job.runSynchronously(on: generic)
                case .job(.action(let action)):
                    action()
                case .idle(let waiter, let idle):
                    // Its task becomes ready (through the hook, on this thread) and runs next.
                    waiter.resume(returning: idle)
                case .wait:
                    wake.wait()
                case .end:
                    break
                }
            }
        }
        // What is ready now, and whatever becomes ready from here on, goes to the pool.
        let left = state.withLock { state -> [Ready] in
            defer {
                state.active = false
                state.jobs.removeAll()
                state.next = 0
                state.waiting = false
            }
            return Array(state.jobs[state.next...])
        }
        hook.pointee = nil
        drainer.store(0, ordering: .releasing)
        draining.store(false, ordering: .releasing)
        for waiter in state.withLock({ state in defer { state.idleWaiters.removeAll() }; return state.idleWaiters }) { waiter.continuation.resume(returning: false) }
        let given = original.withLock { $0 }
        for ready in left {
            switch ready {
            case .job(let job): given?(job)
            case .action(let action): Task { action() }
            }
        }
    }

    /// The first wait on the machine's clock by a task of a drain, not yet taken
    /// (``takeRealTimeWait()``).
    private static let realTimeWait = Mutex<String?>(nil)

    /// Called by ``RealClock``'s sleep and timers. In a task of the drain that runs now,
    /// such a wait is a shell that took its time from outside its node's runtime: virtual
    /// time does not wake it, so the run goes on without it (a deadline that never comes,
    /// a call that waits past its bound) and differs from thread to thread. Recorded, the
    /// first since the last ``takeRealTimeWait()``, for the drain's driver to fail on;
    /// nothing anywhere else (one atomic load off the draining thread: real nodes pay
    /// only that).
    static func noteRealTimeWait(_ what: @autoclosure () -> String) {
        guard isDrainingThread, insideDrain else { return }
        let description = what()
        realTimeWait.withLock { first in
            if first == nil { first = description }
        }
    }

    /// The first wait on the machine's clock by a task of a drain since the last call
    /// (``noteRealTimeWait(_:)``), or nil; cleared. A simulated cluster's driver fails
    /// on it: the simulator runs the shells that ship only if they wait on their runtime.
    public static func takeRealTimeWait() -> String? {
        realTimeWait.withLock { first in
            defer { first = nil }
            return first
        }
    }

    /// Whether the caller runs on the thread that drains (its own tasks' or another test's).
    private static var isDrainingThread: Bool {
        let thread = drainer.load(ordering: .acquiring)
        return thread != 0 && thread == UInt(pthread_self())
    }

    /// Latency charged to the blocking work running inline now (``charge(_:on:)``), which
    /// ``runBlocking(_:_:)`` sleeps out once the work is done. Only the draining thread
    /// touches it, one inline call at a time.
    private static let charged = Mutex<(clock: any RuntimeClock, seconds: Double)?>(nil)

    /// Charges `seconds` of `clock` to the blocking work running inline on the draining
    /// thread now (a slow simulated disk's write), instead of blocking that thread, which
    /// would stop every task and the clock with it: the work's caller sleeps them out on
    /// `clock` when the work returns. False (nothing charged) outside the drain's own
    /// tasks (``isCurrent``): the caller waits as it would.
    public static func charge(_ seconds: Double, on clock: any RuntimeClock) -> Bool {
        guard isCurrent else { return false }
        charged.withLock { charged in
            charged = (clock, (charged?.seconds ?? 0) + seconds)
        }
        return true
    }

    /// Runs `body` inline on the draining thread, then sleeps out the latency it charged.
    static func runInline<T>(_ body: () throws -> T) async rethrows -> T {
        let value: T
        do {
            value = try body()
        } catch {
            await sleepOutCharge()
            throw error
        }
        await sleepOutCharge()
        return value
    }

    /// Runs `body` inline on the draining thread; what it charged is not waited for (no
    /// caller waits for it: ``startBlocking(_:_:)``).
    static func runInlineUnawaited(_ body: () -> Void) {
        body()
        charged.withLock { $0 = nil }
    }

    private static func sleepOutCharge() async {
        guard let (clock, seconds) = charged.withLock({ charged in defer { charged = nil }; return charged }) else { return }
        try? await clock.sleep(for: seconds)
    }

    /// What the draining thread does next.
    private enum Next {
        case job(Ready)
        /// Resume a task in ``untilIdle()``: with true when nothing else was ready.
        case idle(CheckedContinuation<Bool, Never>, Bool)
        /// Nothing is ready: wait for ``wake``.
        case wait
        /// Nothing is ready and the drain has ended.
        case end
    }

    private static func enqueue(_ job: UnownedJob, original given: Original) {
        original.withLock { if $0 == nil { $0 = given } }
        let (queued, signal) = state.withLock { state -> (Bool, Bool) in
            guard state.active else { return (false, false) }
            state.jobs.append(.job(job))
            defer { state.waiting = false }
            return (true, state.waiting)
        }
        if !queued { return given(job) }
        if signal { wake.signal() }
    }
}
