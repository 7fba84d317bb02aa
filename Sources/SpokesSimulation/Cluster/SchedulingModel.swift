import SpokesCluster

/// A coordinator placing one job's tasks on workers, in the simulator (issue 18 §2): the
/// real `Placement` on the coordinator `c`, the real `WorkerAdmission` on each worker
/// `w1`...`wN`, and the coordinator's real `Membership` of them, fed by heartbeats, in a
/// small shell that does what `Systems`, `JobRunner` and `ScanSystem` do with them:
/// - the coordinator greets a worker it has no live member for, heartbeats the others,
///   offers a worker to `Placement` when it turns alive (again), takes it away when dead;
/// - it sends each task to the place `Placement` grants; a `busy` answer gives the place
///   back with a cool-down, a `done` gives it back and accepts the task's result once; an
///   attempt with no answer by its deadline, or on a worker declared dead, gives it back
///   and the task goes again (to another worker while there is one);
/// - a worker runs what `WorkerAdmission` admits, queues what it says to queue, answers
///   busy otherwise, and passes a finished attempt's place to the oldest queued one.
/// Faults (crash, pause, slow, partitions, loss, duplication, delay) hit the workers only.
///
/// Invariants, after every event:
/// - the coordinator never has more attempts out on one worker node than its slots plus
///   queue places, whatever membership does (the frozen-worker overcommit of issue 15 §2);
/// - a worker never runs more attempts than its slots, nor queues more than its queue places;
/// - each task's result is accepted once.
///
/// Liveness, at the end (faults healed `settle` seconds before): every task has its result.
public struct SchedulingModel: SimulationModel {
    public struct Options: Sendable, Hashable {
        public var workers: Int
        public var slots: Int
        public var tasks: Int
        /// Virtual seconds a task runs.
        public var taskSeconds: Double
        /// Seconds an attempt may go unanswered before it is given up and the task sent again.
        public var deadline: Double
        public var heartbeatInterval: Double
        public var suspectAfter: Double
        public var deadAfter: Double
        /// Plug the hardening issue's bug back in (issue 15 §2): a worker that turns alive
        /// again is offered as if new, its attempts in flight forgotten, as the old
        /// `addSystem` replaced its entry. Exists to show the invariant catches it.
        public var forgetsInFlightWhenAliveAgain = false

        public init(workers: Int = 3, slots: Int = 2, tasks: Int = 60, taskSeconds: Double = 0.3, deadline: Double = 3,
                    heartbeatInterval: Double = ClusterSettings.defaults.heartbeatInterval,
                    suspectAfter: Double = ClusterSettings.defaults.suspectTimeout, deadAfter: Double = ClusterSettings.defaults.deadTimeout) {
            self.workers = workers
            self.slots = slots
            self.tasks = tasks
            self.taskSeconds = taskSeconds
            self.deadline = deadline
            self.heartbeatInterval = heartbeatInterval
            self.suspectAfter = suspectAfter
            self.deadAfter = deadAfter
        }
    }

    public enum Message: SimulationTraceable, Sendable {
        case hello(NodeID)
        case welcome(NodeID)
        case heartbeat(NodeID)
        case heartbeatAck(NodeID)
        case run(attempt: Int, task: Int)
        case done(attempt: Int, task: Int)
        case busy(attempt: Int)

        public var description: String {
            switch self {
            case .hello(let node): "hello \(node)"
            case .welcome(let node): "welcome \(node)"
            case .heartbeat(let node): "heartbeat \(node)"
            case .heartbeatAck(let node): "heartbeat-ack \(node)"
            case .run(let attempt, let task): "run attempt \(attempt) of task \(task)"
            case .done(let attempt, let task): "done attempt \(attempt) of task \(task)"
            case .busy(let attempt): "busy attempt \(attempt)"
            }
        }

        public func trace(into hasher: inout TraceHasher) {
            switch self {
            case .hello(let node): hasher.combine(1); hasher.combine(node.description)
            case .welcome(let node): hasher.combine(2); hasher.combine(node.description)
            case .heartbeat(let node): hasher.combine(3); hasher.combine(node.description)
            case .heartbeatAck(let node): hasher.combine(4); hasher.combine(node.description)
            case .run(let attempt, let task): hasher.combine(5); hasher.combine(UInt64(attempt)); hasher.combine(UInt64(task))
            case .done(let attempt, let task): hasher.combine(6); hasher.combine(UInt64(attempt)); hasher.combine(UInt64(task))
            case .busy(let attempt): hasher.combine(7); hasher.combine(UInt64(attempt))
            }
        }
    }

    public enum Timer: SimulationTraceable, Sendable {
        case tick(incarnation: UInt64)
        /// A worker's attempt ends.
        case finish(attempt: Int, task: Int, incarnation: UInt64)
        /// The coordinator gives up an attempt that has not answered.
        case deadline(attempt: Int)

        public var description: String {
            switch self {
            case .tick(let incarnation): "tick #\(incarnation)"
            case .finish(let attempt, let task, _): "finish attempt \(attempt) of task \(task)"
            case .deadline(let attempt): "deadline of attempt \(attempt)"
            }
        }

        public func trace(into hasher: inout TraceHasher) {
            switch self {
            case .tick(let incarnation): hasher.combine(8); hasher.combine(incarnation)
            case .finish(let attempt, let task, let incarnation):
                hasher.combine(9); hasher.combine(UInt64(attempt)); hasher.combine(UInt64(task)); hasher.combine(incarnation)
            case .deadline(let attempt): hasher.combine(10); hasher.combine(UInt64(attempt))
            }
        }
    }

    /// The coordinator: its view of the workers and the job.
    struct Coordinator {
        var membership: Membership
        var placement: Placement<String>
        /// The `Placement` worker key each node is offered under now.
        var keys: [String: String] = [:]
        var rejoins = 0
        /// Tasks waiting for a place, and the node each last failed on.
        var waiting: [(task: Int, avoiding: String?)]
        var out: [Int: (task: Int, grant: Placement<String>.Grant)] = [:]
        var accepted: [Int: Int] = [:]
        var nextAttempt = 1
    }

    /// A worker: what it runs and what waits.
    struct Worker {
        var node: NodeID
        var admission: WorkerAdmission
        var queued: [WorkerAdmission.Ticket: (attempt: Int, task: Int)] = [:]
        var queueOrder: [WorkerAdmission.Ticket] = []
    }

    public let options: Options
    public let nodes: [String]
    public var faultableNodes: [String] { Array(nodes.dropFirst()) }
    private var coordinator: Coordinator?
    private var workers: [String: Worker] = [:]
    private var nextIncarnation: UInt64 = 1
    private var coordinatorIncarnation: UInt64 = 0
    public private(set) var violation: String?
    /// Most attempts the coordinator had out on one node at once, over the run.
    public private(set) var mostOutOnOneNode = 0

    public init(options: Options) {
        self.options = options
        nodes = ["c"] + (1...max(1, options.workers)).map { "w\($0)" }
    }

    private var places: Int { options.slots + WorkerAdmission.queueLength(places: options.slots) }

    public mutating func start(_ node: String, in context: inout SimulationContext<Self>) {
        let incarnation = nextIncarnation
        nextIncarnation += 1
        let id = NodeID(name: node, incarnation: incarnation)
        if node == "c" {
            coordinatorIncarnation = incarnation
            coordinator = Coordinator(
                membership: Membership(local: id, suspectTimeout: options.suspectAfter, deadTimeout: options.deadAfter),
                placement: Placement(local: "c", node: "c", budgets: .zero, localOffered: false),
                waiting: (0..<options.tasks).map { ($0, nil) })
            tick(in: &context)
        } else {
            workers[node] = Worker(node: id, admission: WorkerAdmission(budgets: TaskBudgets(cpu: options.slots, waiting: 0)))
        }
    }

    public mutating func receive(_ message: Message, from sender: String, at node: String, in context: inout SimulationContext<Self>) {
        if node == "c" {
            coordinatorReceives(message, from: sender, in: &context)
        } else {
            workerReceives(message, at: node, in: &context)
        }
    }

    public mutating func fire(_ timer: Timer, at node: String, in context: inout SimulationContext<Self>) {
        switch timer {
        case .tick(let incarnation):
            guard node == "c", incarnation == coordinatorIncarnation else { return }
            tick(in: &context)
        case .finish(let attempt, let task, let incarnation):
            guard var worker = workers[node], worker.node.incarnation == incarnation else { return }
            context.send(.done(attempt: attempt, task: task), to: "c")
            if let next = worker.admission.finish(.cpu), let queued = worker.queued.removeValue(forKey: next) {
                worker.queueOrder.removeAll { $0 == next }
                context.schedule(.finish(attempt: queued.attempt, task: queued.task, incarnation: incarnation), after: options.taskSeconds)
            }
            workers[node] = worker
        case .deadline(let attempt):
            guard node == "c", var state = coordinator, let out = state.out.removeValue(forKey: attempt) else { return }
            state.placement.release(out.grant)
            state.waiting.insert((out.task, out.grant.node), at: 0)
            coordinator = state
            dispatch(in: &context)
        }
    }

    public mutating func crash(_ node: String, in context: inout SimulationContext<Self>) {
        workers[node] = nil
    }

    public mutating func healed(in context: inout SimulationContext<Self>) {}

    public func finalViolation(now: Double) -> String? {
        guard let state = coordinator else { return "the coordinator is not running" }
        let missing = (0..<options.tasks).filter { state.accepted[$0] == nil }
        guard missing.isEmpty else {
            return "\(missing.count) of \(options.tasks) tasks have no result after the faults healed (first: task \(missing[0]); \(state.out.count) attempts out)"
        }
        return nil
    }

    // MARK: - The worker

    private mutating func workerReceives(_ message: Message, at node: String, in context: inout SimulationContext<Self>) {
        guard var worker = workers[node] else { return }
        switch message {
        case .hello:
            context.send(.welcome(worker.node), to: "c")
        case .heartbeat:
            context.send(.heartbeatAck(worker.node), to: "c")
        case .run(let attempt, let task):
            switch worker.admission.arrive(.cpu) {
            case .run:
                context.schedule(.finish(attempt: attempt, task: task, incarnation: worker.node.incarnation), after: options.taskSeconds)
            case .wait(let ticket):
                worker.queued[ticket] = (attempt, task)
                worker.queueOrder.append(ticket)
            case .busy:
                context.send(.busy(attempt: attempt), to: "c")
            case .waitDisplacing:
                // Only one job runs here: an attempt of its own is never displaced.
                violation = violation ?? "\(worker.node) displaced an attempt of the only job"
            }
            if violation == nil, worker.admission.inUse.cpu > options.slots || worker.admission.queued(.cpu) > worker.admission.queueLength(.cpu) {
                violation = "\(worker.node) runs \(worker.admission.inUse.cpu) attempts and queues \(worker.admission.queued(.cpu)) with \(options.slots) slots"
            }
        case .welcome, .heartbeatAck, .done, .busy:
            break
        }
        workers[node] = worker
    }

    // MARK: - The coordinator

    private mutating func coordinatorReceives(_ message: Message, from sender: String, in context: inout SimulationContext<Self>) {
        switch message {
        case .welcome(let peer):
            observe(.connected(node: peer, address: sender, slots: options.slots), in: &context)
        case .heartbeatAck(let peer):
            observe(.heard(node: peer), in: &context)
        case .done(let attempt, let task):
            guard var state = coordinator else { return }
            if let out = state.out.removeValue(forKey: attempt) { state.placement.release(out.grant) }
            // A late answer from an attempt given up still carries a valid result: the
            // first one accepted wins, as the job ledger's fencing does.
            if state.accepted[task] == nil {
                state.accepted[task] = attempt
                state.waiting.removeAll { $0.task == task }
            }
            coordinator = state
            dispatch(in: &context)
        case .busy(let attempt):
            guard var state = coordinator, let out = state.out.removeValue(forKey: attempt) else { return }
            _ = state.placement.releaseBusy(out.grant, now: context.now)
            if state.accepted[out.task] == nil { state.waiting.insert((out.task, nil), at: 0) }
            coordinator = state
        case .hello, .heartbeat, .run:
            break
        }
    }

    /// Greets, heartbeats, lets membership check its timeouts, places what it can, and
    /// schedules the next tick.
    private mutating func tick(in context: inout SimulationContext<Self>) {
        guard let state = coordinator else { return }
        let me = state.membership.local
        for worker in nodes.dropFirst() {
            let member = state.membership.members[worker]
            if member == nil || member?.state == .dead || member?.state == .left {
                context.send(.hello(me), to: worker)
            } else {
                context.send(.heartbeat(me), to: worker)
            }
        }
        observe(.tick, in: &context)
        dispatch(in: &context)
        context.schedule(.tick(incarnation: me.incarnation), after: options.heartbeatInterval)
    }

    /// Sends waiting tasks to the places `Placement` grants, and checks the overcommit invariant.
    private mutating func dispatch(in context: inout SimulationContext<Self>) {
        guard var state = coordinator else { return }
        while let (task, avoiding) = state.waiting.first {
            if state.accepted[task] != nil {
                state.waiting.removeFirst()
                continue
            }
            guard let grant = state.placement.take(.cpu, avoiding: avoiding, stillToSend: state.waiting.count - 1, now: context.now) else { break }
            state.waiting.removeFirst()
            let attempt = state.nextAttempt
            state.nextAttempt += 1
            state.out[attempt] = (task, grant)
            context.send(.run(attempt: attempt, task: task), to: grant.node)
            context.schedule(.deadline(attempt: attempt), after: options.deadline)
            let onNode = state.out.values.count { $0.grant.node == grant.node }
            mostOutOnOneNode = max(mostOutOnOneNode, onNode)
            if violation == nil, onNode > places {
                violation = "the coordinator has \(onNode) attempts out on \(grant.node), which has \(options.slots) slots and \(places - options.slots) queue place(s)"
            }
        }
        coordinator = state
    }

    /// Feeds membership, and offers or withdraws workers as `Systems` does on its events.
    private mutating func observe(_ observation: Membership.Observation, in context: inout SimulationContext<Self>) {
        guard var state = coordinator else { return }
        let actions = state.membership.observe(observation, at: context.now)
        let budgets = TaskBudgets(cpu: options.slots, waiting: 0)
        for case .publish(let event) in actions {
            context.note("c: \(event)")
            switch event {
            case .joined(let member) where member.state == .alive, .changed(let member, _) where member.state == .alive:
                let name = member.node.name
                var key = "\(member.node)"
                if options.forgetsInFlightWhenAliveAgain, state.keys[name] == key {
                    state.rejoins += 1
                    key += "/\(state.rejoins)"
                }
                state.keys[name] = key
                state.placement.add(node: name, worker: key, budgets: budgets)
            case .changed(let member, _) where member.state == .dead || member.state == .left:
                state.placement.remove(node: member.node.name)
                // Its attempts fail with their connection: the places come back, the tasks go again.
                for (attempt, out) in state.out where out.grant.node == member.node.name {
                    state.out[attempt] = nil
                    state.placement.release(out.grant)
                    if state.accepted[out.task] == nil { state.waiting.insert((out.task, out.grant.node), at: 0) }
                }
            case .removed(let member):
                state.placement.remove(node: member.node.name)
            default:
                break
            }
        }
        coordinator = state
    }
}
