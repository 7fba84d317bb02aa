import Distributed
import SpokesConcurrency
import Synchronization

/// A node's worker (the SkyNet book's `ScanSystem`): it runs the tasks coordinators send
/// it, within its budgets. Every node hosts one under the well-known name `worker`.
///
/// Which attempts run, wait in its queue or are turned away busy, and which waiting
/// attempt takes a freed place, is ``WorkerAdmission``'s decision, a pure state machine;
/// this actor is its shell: it parks and resumes attempts, runs them, and counts them.
/// A task's cost (``TaskRequest/cost``) says which budget it draws on: a cpu slot
/// (`node.slots`) or a waiting slot (`node.waiting_slots`).
///
/// The worker enforces its budgets itself, because several coordinators may send to it:
/// when a budget and its queue are full, ``run(_:)`` answers ``TaskResult/busy``, which is
/// not a failure. A coordinator sends a worker its next task before the current one ends,
/// so a slot never idles for a round trip: that task waits in the queue.
public distributed actor ScanSystem {
    public typealias ActorSystem = ClusterSystem

    public static let wellKnownName = "worker"

    /// Fault injection: every Nth task fails (0: never), and each task waits this long first.
    public struct Faults: Sendable, Hashable {
        public var failEvery: Int
        public var slowMilliseconds: Int

        public init(failEvery: Int = 0, slowMilliseconds: Int = 0) {
            self.failEvery = failEvery
            self.slowMilliseconds = slowMilliseconds
        }
    }

    private let registry: TaskRegistry
    private let faults: Faults
    private let counters: TaskCounters
    private let timeline: TaskTimeline?
    /// Every change counted in ``TaskCounters/admissionChanges`` (the simulator's checks
    /// read the admission again only when it changed).
    private var admission: WorkerAdmission {
        didSet { counters.admissionChanges.bump() }
    }
    private var running: [String: Task<String, any Error>] = [:]
    /// Attempts waiting in a queue, by ticket; resumed with true when given a place.
    private var parked: [WorkerAdmission.Ticket: (key: String, resume: CheckedContinuation<Parked, Never>)] = [:]
    private var started = 0
    /// The highest priority this node lets a job have (`jobs.max_priority`).
    private let maximumPriority: Int

    /// How a parked attempt's wait ended.
    private enum Parked {
        /// It was given a place: run it.
        case granted
        /// It was cancelled while it waited.
        case withdrawn
        /// A job further below its share took its queue place: answer busy.
        case displaced
    }

    /// A worker with `slots` cpu slots and `waitingSlots` waiting slots, which lowers a
    /// job's priority to `maximumPriority` (`jobs.max_priority`) when above it.
    public init(
        actorSystem: ClusterSystem, slots: Int, waitingSlots: Int = ClusterSettings.defaultWaitingSlots, registry: TaskRegistry,
        faults: Faults = Faults(), counters: TaskCounters = TaskCounters(), timeline: TaskTimeline? = nil,
        maximumPriority: Int = JobShare.priorities.upperBound
    ) {
        self.actorSystem = actorSystem
        admission = WorkerAdmission(budgets: TaskBudgets(cpu: slots, waiting: waitingSlots))
        self.maximumPriority = maximumPriority
        self.registry = registry
        self.faults = faults
        self.counters = counters
        self.timeline = timeline
    }

    /// Places in use now (running attempts), of either cost.
    public distributed var count: Int {
        admission.inUse.total
    }

    /// Attempts waiting in a queue now, of either cost.
    public distributed var queued: Int {
        admission.queuedTotal
    }

    /// The worker's admission as it stands (budgets, places in use, queues), read-only and
    /// local: what the simulator checks after every event.
    public var admissionNow: WorkerAdmission { admission }

    /// The task kinds this worker runs, with their versions: what coordinators ask before
    /// placing a job's tasks here (``KindPlacement``).
    public distributed func kinds() -> [TaskSchema] {
        registry.schemas
    }

    /// Runs a task in a free place of its cost, waits for one in the queue, or answers
    /// `.busy` when the queue is full too.
    public distributed func run(_ request: TaskRequest) async throws -> TaskResult {
        try request.checkRanges()
        let arrived = actorSystem.runtime.now
        guard registry.contains(request.kind) else {
            actorSystem.rejections.count(.unknownTaskKind)
            throw TaskError.unknownKind(request.kind)
        }
        let cost = request.cost
        let share = (request.share ?? .unnamed).capped(atPriority: maximumPriority)
        var waiting: WorkerAdmission.Ticket?
        switch admission.arrive(cost, job: request.job, share: share) {
        case .run:
            break
        case .wait(let ticket):
            waiting = ticket
        case .waitDisplacing(let ticket, let displaced):
            parked.removeValue(forKey: displaced)?.resume.resume(returning: .displaced)
            waiting = ticket
        case .busy:
            counters.answeredBusy(kind: request.kind)
            return .busy
        }
        if let ticket = waiting {
            // No suspension between arriving and parking: a place passed on always finds
            // the ticket parked.
            let outcome = await withTaskCancellationHandler {
                await withCheckedContinuation { parked[ticket] = (request.key, $0) }
            } onCancel: {
                // Runs after the park: the actor is busy until this call suspends.
                Task { await self.withdraw(ticket) }
            }
            switch outcome {
            case .granted: break
            case .withdrawn: throw CancellationError()
            case .displaced:
                counters.answeredBusy(kind: request.kind)
                return .busy
            }
        }
        defer { finish(cost, job: request.job) }
        started += 1
        let number = started
        // Ready since its coordinator counted it ready (on this clock when it is this
        // node), unless it waited here for a slot.
        let readySince = waiting == nil ? request.readySinceHere ?? arrived - (request.readyAgo ?? 0) : actorSystem.runtime.now
        let context = TaskContext(system: actorSystem, job: request.job, task: request.task, attempt: request.attempt, readySince: readySince)
        let registry = registry
        let faults = faults
        let node = actorSystem.node.name
        let runtime = actorSystem.runtime
        let key = request.key
        let work = Task {
            if faults.slowMilliseconds > 0 { try await runtime.sleep(for: Double(faults.slowMilliseconds) / 1000) }
            if faults.failEvery > 0, number % faults.failEvery == 0 {
                throw TaskError.injectedFailure(node: node, task: request.task)
            }
            return try await registry.run(request, context: context)
        }
        running[key] = work
        counters.started(cost)
        let ticket = timeline?.begin(job: request.job, task: request.task, attempt: request.attempt)
        var outcome = TaskTimeline.Outcome.failed
        defer {
            running[key] = nil
            counters.finished(cost, kind: request.kind, succeeded: outcome == .succeeded)
            if let ticket { timeline?.end(ticket, outcome: outcome) }
        }
        do {
            let output = try await withTaskCancellationHandler {
                try await work.value
            } onCancel: {
                work.cancel()
            }
            outcome = .succeeded
            return .done(output: output)
        } catch {
            outcome = error is CancellationError || work.isCancelled ? .cancelled : .failed
            throw error
        }
    }

    /// Cancels an attempt, running or queued (after its deadline passed on the coordinator).
    public distributed func cancel(_ key: String) {
        running[key]?.cancel()
        for (ticket, attempt) in parked where attempt.key == key { withdraw(ticket) }
    }

    /// A queued attempt gave up: it leaves the queue and is told it got no place.
    private func withdraw(_ ticket: WorkerAdmission.Ticket) {
        guard admission.withdraw(ticket) else { return }
        parked.removeValue(forKey: ticket)?.resume.resume(returning: .withdrawn)
    }

    /// A running attempt of `cost` of `job` ended: its place passes to a queued attempt
    /// of the job furthest below its share, or is freed.
    private func finish(_ cost: TaskCost, job: String) {
        var ending = job
        while let next = admission.finish(cost, job: ending) {
            if let attempt = parked.removeValue(forKey: next.ticket) {
                attempt.resume.resume(returning: .granted)
                return
            }
            // Never happens (every ticket is parked before anything else runs): the place
            // its ticket was given is handed on as if its attempt ended at once.
            ending = next.job
        }
    }
}

/// A worker's task counts, readable from any thread (for `status` and the dashboard).
/// Running counts only attempts that started (a queued attempt or a busy answer is not one).
/// Ended attempts are also counted per task kind: only kinds the worker runs get here
/// (an unknown kind is refused before), so the kinds are a small fixed set.
public final class TaskCounters: Sendable {
    private let activeCPU = Atomic<Int>(0)
    private let activeWaiting = Atomic<Int>(0)
    private let ended = Mutex<[String: TaskAttemptCounts]>([:])
    /// How many times the worker's admission (places in use, queues) changed: a reader
    /// that saw the same count before has seen its admission as it stands
    /// (``ScanSystem/admissionNow``) without a hop onto the worker.
    public let admissionChanges = ChangeCount()

    public init() {}

    /// Attempts running now, of either cost.
    public var running: Int { runningCPU + runningWaiting }
    /// Attempts running now in cpu slots.
    public var runningCPU: Int { activeCPU.load(ordering: .relaxed) }
    /// Attempts running now in waiting slots.
    public var runningWaiting: Int { activeWaiting.load(ordering: .relaxed) }
    /// Attempts running now, per cost: the budgets in use.
    public var inUse: TaskBudgets { TaskBudgets(cpu: runningCPU, waiting: runningWaiting) }
    /// Ended and busy attempts by task kind.
    public var byKind: [String: TaskAttemptCounts] { ended.withLock { $0 } }
    /// Every kind's counts added up.
    public var total: TaskAttemptCounts { byKind.values.reduce(TaskAttemptCounts(), +) }
    /// Attempts that ended with a result.
    public var succeeded: Int { total.succeeded }
    /// Attempts that ended with an error or were cancelled.
    public var failed: Int { total.failed }
    /// Attempts that ended, either way.
    public var completed: Int { succeeded + failed }
    /// Attempts turned away with ``TaskResult/busy`` (every slot and queue place taken).
    public var busy: Int { total.busy }

    func answeredBusy(kind: String) {
        ended.withLock { $0[kind, default: TaskAttemptCounts()].busy += 1 }
    }

    func started(_ cost: TaskCost) {
        if cost == .cpu { activeCPU.add(1, ordering: .relaxed) } else { activeWaiting.add(1, ordering: .relaxed) }
    }

    func finished(_ cost: TaskCost, kind: String, succeeded: Bool) {
        if cost == .cpu { activeCPU.subtract(1, ordering: .relaxed) } else { activeWaiting.subtract(1, ordering: .relaxed) }
        ended.withLock { ended in
            if succeeded { ended[kind, default: TaskAttemptCounts()].succeeded += 1 } else { ended[kind, default: TaskAttemptCounts()].failed += 1 }
        }
    }
}

/// How a worker's attempts of one kind (or of all) ended.
public struct TaskAttemptCounts: Sendable, Hashable {
    /// Ended with a result.
    public var succeeded = 0
    /// Ended with an error, or cancelled.
    public var failed = 0
    /// Turned away busy: every slot and queue place taken.
    public var busy = 0

    public init(succeeded: Int = 0, failed: Int = 0, busy: Int = 0) {
        self.succeeded = succeeded
        self.failed = failed
        self.busy = busy
    }

    public static func + (a: TaskAttemptCounts, b: TaskAttemptCounts) -> TaskAttemptCounts {
        TaskAttemptCounts(succeeded: a.succeeded + b.succeeded, failed: a.failed + b.failed, busy: a.busy + b.busy)
    }
}
