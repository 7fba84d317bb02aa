import Synchronization
import SpokesConcurrency
import Distributed

/// Runs a job's tasks over a coordinator's ``Systems``: each task on the first available
/// system under a deadline; a failure (thrown error, deadline, lost peer) is retried on
/// the first available system other than the one that failed (local first), at most
/// `retries` times, keeping every attempt's reason.
/// A busy answer is not a failure: the task just goes to another system.
/// Each task has a ``TaskCost`` (one for the whole job, or one per task): the budget its
/// attempts ask ``Systems`` for, and the one their ``TaskRequest`` tells the worker it takes.
public struct JobRunner: Sendable {
    /// One failed attempt.
    public struct Failure: Sendable, Hashable, Codable {
        public var attempt: Int
        public var node: String
        public var reason: String
        /// The attempt ended, or never started, because the job was cancelled: not a
        /// failure of the task.
        public var cancelled = false

        public init(attempt: Int, node: String, reason: String, cancelled: Bool = false) {
            self.attempt = attempt
            self.node = node
            self.reason = reason
            self.cancelled = cancelled
        }
    }

    /// How one task ended.
    public struct Outcome: Sendable, Hashable, Codable {
        public var task: Int
        /// The accepted output, or nil when every attempt failed.
        public var output: String?
        /// The node that produced the output.
        public var node: String?
        public var attempts: Int
        public var failures: [Failure]

        public init(task: Int, output: String?, node: String?, attempts: Int, failures: [Failure]) {
            self.task = task
            self.output = output
            self.node = node
            self.attempts = attempts
            self.failures = failures
        }

        /// No result because the job was cancelled (its last attempt was cancelled, or
        /// never started), rather than because every attempt failed.
        public var cancelled: Bool { output == nil && failures.last?.cancelled == true }
    }

    /// What happens as the job runs, for progress displays.
    public enum Event: Sendable {
        case started(task: Int, attempt: Int, node: String)
        case finished(task: Int, node: String)
        case failed(task: Int, attempt: Int, node: String, reason: String, willRetry: Bool)
        /// The worker at `node` was full: the attempt did not start there, and goes elsewhere.
        case busy(task: Int, attempt: Int, node: String)
        /// The job was cancelled: the attempt stopped on `node`, or (nil) never started.
        case cancelled(task: Int, attempt: Int, node: String?)
    }

    public let systems: Systems
    public let job: String
    public let kind: String
    /// Seconds an attempt may take.
    public let deadline: Double
    /// Retries after the first attempt.
    public let retries: Int
    /// What task `task` costs: a cpu slot or a waiting slot on its worker.
    public let cost: @Sendable (_ task: Int) -> TaskCost
    /// The job's owner, priority and cap, carried on every attempt so each worker shares
    /// its slots fairly between jobs; its ``JobShare/maxSlots`` also caps the job's tasks
    /// in flight here (nil: an unnamed owner's job at the default priority, no cap).
    public var share: JobShare?

    /// Attempts started again after a failed one, over `outcomes`: what reports call
    /// retries. A cancelled attempt, or one a full worker turned away, is not one.
    public static func retries(in outcomes: [Outcome]) -> Int {
        outcomes.reduce(0) { $0 + max(0, $1.attempts - 1) }
    }

    /// Deadlines a job may ask for, in seconds: more than nothing, at most about 11.6 days.
    public static let deadlineRange = 0.001...1_000_000.0
    /// Retries a job may ask for.
    public static let retryRange = 0...100

    /// Throws when a job's deadline or retries (from a submitter) are out of range.
    public static func checkRanges(deadline: Double, retries: Int) throws(OutOfRange) {
        try OutOfRange.check("deadline", deadline, in: deadlineRange, unit: " seconds")
        try OutOfRange.check("retries", retries, in: retryRange)
    }

    /// A runner whose tasks all cost `cost`.
    public init(systems: Systems, job: String, kind: String, deadline: Double, retries: Int, cost: TaskCost = .cpu) {
        self.init(systems: systems, job: job, kind: kind, deadline: deadline, retries: retries, costOf: { _ in cost })
    }

    /// A runner whose task `task` costs `costOf(task)` (for kinds whose cost depends on the input).
    public init(systems: Systems, job: String, kind: String, deadline: Double, retries: Int, costOf: @escaping @Sendable (_ task: Int) -> TaskCost) {
        self.systems = systems
        self.job = job
        self.kind = kind
        self.deadline = deadline
        self.retries = retries
        cost = costOf
    }

    /// Runs tasks `0..<count`. `input` gives an attempt's input (so a retry can resume);
    /// `accept` decides whether an attempt's output counts (so a fenced-off attempt's
    /// late result does not). `onOutcome` hears each task's outcome as it ends, from the
    /// task's own child task, so possibly from several at once (a task cancelled before it
    /// started is only returned). Returns one outcome per task, in
    /// task order. Cancelling the calling task stops scheduling; running attempts are
    /// cancelled.
    public func run(
        count: Int,
        input: @escaping @Sendable (_ task: Int, _ attempt: Int) async throws -> String,
        accept: @escaping @Sendable (_ task: Int, _ attempt: Int, _ output: String) async -> Bool = { _, _, _ in true },
        onEvent: @escaping @Sendable (Event) -> Void = { _ in },
        onOutcome: @escaping @Sendable (Outcome) -> Void = { _ in }
    ) async -> [Outcome] {
        var outcomes: [Outcome] = []
        // `--max-slots`: at most that many of the job's tasks hold places at once; a task
        // holds its pass from before it asks for a place until its outcome (retries included).
        let passes = share?.maxSlots.map { TaskPasses(limit: $0) }
        let clock = systems.clock
        // Since when the next task has been ready to run: the run's start, or the end of
        // the last wait for a pass or a place (a task that waits for one is ready once it
        // has it). Its first attempt carries it (``TaskRequest/readyAgo``).
        var readySince = clock.now
        await withTaskGroup(of: Outcome.self) { group in
            for task in 0..<count {
                if await passes?.acquire() == true { readySince = clock.now }
                guard let (commitment, waited) = try? await systems.place(for: cost(task), stillToSend: count - task - 1) else {
                    passes?.release()
                    break
                }
                if waited { readySince = clock.now }
                // Heard as the task ends, not once every task is placed: a job with more
                // tasks than places would otherwise hold its first ends back until its last
                // task found a place (its client's outputs, and what a coordinator keeps).
                group.addTask { [readySince] in
                    let outcome = await runTask(task, on: commitment, readySince: readySince, input: input, accept: accept, onEvent: onEvent)
                    passes?.release()
                    onOutcome(outcome)
                    return outcome
                }
            }
            for await outcome in group {
                outcomes.append(outcome)
            }
        }
        let finished = Set(outcomes.map(\.task))
        for task in 0..<count where !finished.contains(task) {
            outcomes.append(Outcome(task: task, output: nil, node: nil, attempts: 0, failures: [Failure(attempt: 1, node: "", reason: "cancelled before it started", cancelled: true)]))
            onEvent(.cancelled(task: task, attempt: 1, node: nil))
        }
        return outcomes.sorted { $0.task < $1.task }
    }

    private func runTask(
        _ task: Int, on first: Systems.Commitment, readySince: Double,
        input: @Sendable (Int, Int) async throws -> String,
        accept: @Sendable (Int, Int, String) async -> Bool,
        onEvent: @Sendable (Event) -> Void
    ) async -> Outcome {
        var commitment = first
        var attempt = 1
        var failures: [Failure] = []
        // The first attempt on the first place counts from `readySince`; nil after it.
        var unsentReadiness: Double? = readySince
        /// The job was cancelled: the attempt stopped on its node, or never started.
        func cancelled(started: Bool) -> Outcome {
            let node = started ? commitment.node : nil
            failures.append(Failure(attempt: attempt, node: node ?? "", reason: started ? "cancelled while it ran" : "cancelled before it started", cancelled: true))
            onEvent(.cancelled(task: task, attempt: attempt, node: node))
            return Outcome(task: task, output: nil, node: nil, attempts: started ? attempt : attempt - 1, failures: failures)
        }
        /// The attempt did not run there (a busy answer, or a call never sent): that is
        /// heard before its place goes back, that worker is skipped a moment, and the task
        /// takes another place (avoiding `node`); nil once cancelled.
        func anotherPlace(avoiding node: String?) async -> Systems.Commitment? {
            onEvent(.busy(task: task, attempt: attempt, node: commitment.node))
            await systems.releaseBusy(commitment)
            return try? await systems.firstAvailableSystem(for: first.cost, avoiding: node, stillToSend: 0)
        }
        while true {
            let reason: String
            var sent = false
            do {
                // A retry, or a task turned away, is ready once it has its new place.
                let ready = unsentReadiness
                unsentReadiness = nil
                let text = try await input(task, attempt)
                let system = commitment.system
                var built = TaskRequest(
                    job: job, task: task, attempt: attempt, kind: kind, input: text, cost: commitment.cost, share: share,
                    readyAgo: ready.map { max(0, systems.clock.now - $0) })
                // The coordinator's own worker reads the same clock: the readiness exactly.
                if !__isRemoteActor(system) { built.readySinceHere = ready }
                let request = built
                onEvent(.started(task: task, attempt: attempt, node: commitment.node))
                sent = true
                // A queued task waits at most until a task ahead of it ends, which is
                // within that task's deadline: it gets that much longer.
                let allowed = commitment.isQueued ? 2 * deadline : deadline
                // A remote attempt's deadline is its call's; a local one needs a task of its own.
                let result = try await __isRemoteActor(system)
                    ? ClusterSystem.withCallDeadline(allowed) { try await system.run(request) }
                    : withTimeout(seconds: allowed, clock: systems.clock) { try await system.run(request) }
                switch result {
                case .busy:
                    // Heard before the place is given back: another task may take the
                    // place at once, and its start must not be counted while this
                    // attempt still is (a board showed more running than a node's places).
                    guard let next = await anotherPlace(avoiding: nil) else { return cancelled(started: false) }
                    commitment = next
                    continue
                case .done(let output):
                    // Every end of an attempt is heard before its place is given back, as
                    // a busy answer is: the next task's start is never counted while this
                    // one still is.
                    if await accept(task, attempt, output) {
                        onEvent(.finished(task: task, node: commitment.node))
                        await systems.release(commitment)
                        return Outcome(task: task, output: output, node: commitment.node, attempts: attempt, failures: failures)
                    }
                    reason = "result of a fenced-off attempt"
                }
            } catch RemoteCallError.unreachable where !Task.isCancelled {
                // Never sent: this coordinator has no connection to that worker (lost, and
                // not yet taken out of its systems). Not an attempt, so it costs no retry
                // (a split once failed users whose retries all went this way in a moment):
                // the place goes back as a busy one's does, that worker is skipped a
                // moment, and the task takes another place.
                guard let next = await anotherPlace(avoiding: commitment.node) else { return cancelled(started: false) }
                commitment = next
                continue
            } catch {
                if error is TimeoutError || Task.isCancelled {
                    // The worker may still be running it: tell it to stop.
                    let system = commitment.system
                    let key = TaskRequest(job: job, task: task, attempt: attempt, kind: kind, input: "").key
                    Task { try? await system.cancel(key) }
                }
                if Task.isCancelled {
                    let outcome = cancelled(started: sent)
                    await systems.release(commitment)
                    return outcome
                }
                reason = FailureReason.describe(error, deadline: deadline)
            }
            failures.append(Failure(attempt: attempt, node: commitment.node, reason: reason))
            let willRetry = attempt <= retries
            onEvent(.failed(task: task, attempt: attempt, node: commitment.node, reason: reason, willRetry: willRetry))
            await systems.release(commitment)
            guard willRetry else { return Outcome(task: task, output: nil, node: nil, attempts: attempt, failures: failures) }
            attempt += 1
            guard let next = try? await systems.firstAvailableSystem(for: first.cost, avoiding: commitment.node, stillToSend: 0) else {
                return cancelled(started: false)
            }
            commitment = next
        }
    }
}

/// At most `limit` of a job's tasks at once (`--max-slots`): ``acquire()`` waits, in
/// order, while `limit` passes are held; ``release()`` hands one on. The waiters are
/// resumed outside the lock, each once (taken out of the list under it).
final class TaskPasses: Sendable {
    private let state: Mutex<(held: Int, waiting: [CheckedContinuation<Bool, Never>])>
    let limit: Int

    init(limit: Int) {
        self.limit = max(1, limit)
        state = Mutex((0, []))
    }

    /// Takes a pass, waiting for one while `limit` are held; true when it waited.
    @discardableResult
    func acquire() async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let now = state.withLock { state -> Bool in
                if state.held < limit {
                    state.held += 1
                    return true
                }
                state.waiting.append(continuation)
                return false
            }
            if now { continuation.resume(returning: false) }
        }
    }

    /// Gives a pass back: to the oldest waiter, or free.
    func release() {
        let next = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            if !state.waiting.isEmpty { return state.waiting.removeFirst() }
            state.held = max(0, state.held - 1)
            return nil
        }
        next?.resume(returning: true)
    }
}
