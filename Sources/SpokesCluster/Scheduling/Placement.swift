/// Where a coordinator sends its next task, as a pure state machine: the workers it may
/// use (its own first), how many of its tasks each has in flight per ``TaskCost``, and
/// which ones answered busy lately. ``Systems`` is its shell: it holds the callers that
/// wait for a place and wakes them. Time comes in as a value (monotonic seconds), so every
/// rule is tested without a node, and a simulator can drive it with a virtual clock.
/// `Worker` is whatever names one worker (per incarnation): ``ScanSystem`` in a node,
/// anything hashable in a simulator. It has no randomness: ties go to the worker added
/// first, the coordinator's own.
///
/// A worker offers, per cost, its budget (``TaskBudgets``) plus its queue places
/// (``WorkerAdmission/queueLength(places:)``). Rules of ``take(_:avoiding:stillToSend:now:)``:
/// - a retry passes the node its last attempt failed on as `avoiding`: that node is
///   skipped while any other is offered, so a task lost with a dead node restarts on a
///   live one;
/// - a worker that answered busy for a cost is skipped for that cost until its cool-down
///   ends (``releaseBusy(_:now:)``);
/// - every budget place of every worker is handed out before any queue place. Cpu tasks
///   take the first worker with a free slot (own first, then in the order they joined);
///   waiting tasks take the least loaded worker (fewest in flight for its budget; ties to
///   the first), so a job's waiting load spreads over the cluster;
/// - queue places are handed out only while `stillToSend` (how many tasks the caller will
///   ask for after this one) is a whole round or more (one task per budget place of that
///   cost in the cluster): near the end, a task waiting in one worker's queue while
///   another worker's slots stand empty would add a round to the job (measured: 2.61 s
///   instead of 2.51 s for 200 x 0.1 s on 8 slots). Retries pass 0.
///
/// Invariant: a worker is never sent more tasks of a cost than its budget plus queue
/// places, whatever membership does. Tasks in flight are counted per `Worker`, not per
/// entry in the list: a worker removed while tasks are in flight stays counted (not
/// offered) until they are released, and adding it again (a member that flapped between
/// states) finds its count where it was. A new incarnation of a node is another `Worker`
/// and starts with none in flight.
public struct Placement<Worker: Hashable & Sendable>: Sendable {
    /// A place this coordinator holds on one worker, until it is released.
    public struct Grant: Sendable, Hashable {
        public let node: String
        public let worker: Worker
        /// On the coordinator's own worker.
        public let isLocal: Bool
        /// Taken beyond the worker's budget: the task may wait in the worker's queue (at
        /// most until one of the tasks ahead of it ends).
        public let isQueued: Bool
        /// The budget it draws on.
        public let cost: TaskCost

        public init(node: String, worker: Worker, isLocal: Bool, isQueued: Bool, cost: TaskCost) {
            self.node = node
            self.worker = worker
            self.isLocal = isLocal
            self.isQueued = isQueued
            self.cost = cost
        }
    }

    /// One worker as this coordinator counts it.
    public struct Load: Sendable, Hashable {
        public var node: String
        public var worker: Worker
        public var budgets: TaskBudgets
        /// This coordinator's tasks on it, per cost, not yet released.
        public var inFlight = TaskBudgets.zero
        /// Until when (monotonic seconds) it is skipped for a cost after answering busy.
        public var busyUntil: [TaskCost: Double] = [:]
        /// False once removed (or replaced by a new incarnation): no longer offered, kept
        /// only while tasks are in flight on it.
        public var offered = true

        /// Budget plus queue places of `cost`: the most this coordinator sends it at once.
        public func places(_ cost: TaskCost) -> Int {
            budgets[cost] + WorkerAdmission.queueLength(places: budgets[cost])
        }
    }

    /// The local worker first, then the others in the order they joined.
    public private(set) var workers: [Load]
    /// Seconds a worker that answered busy is skipped for that cost.
    public let busyCooldown: Double

    /// Starts with the coordinator's own worker only. `localOffered` false keeps it out
    /// of every grant (it does not run the job's kind, see ``KindPlacement``); it still
    /// heads the list, so the others keep their order.
    public init(local worker: Worker, node: String, budgets: TaskBudgets, busyCooldown: Double = 0.02, localOffered: Bool = true) {
        workers = [Load(node: node, worker: worker, budgets: budgets, offered: localOffered)]
        self.busyCooldown = busyCooldown
    }

    /// Names of the workers offered now, the local one first.
    public var nodes: [String] { workers.filter(\.offered).map(\.node) }

    /// Budget places of `cost` over every worker offered now.
    public func totalSlots(_ cost: TaskCost) -> Int {
        workers.withUnsafeBufferPointer { Self.totalSlots(cost, of: $0) }
    }

    /// Read through a buffer, here and wherever the list is searched: an element
    /// read through the array's subscript was copied whole (its node's name, worker and
    /// cool-downs retained and released) for each field read, about seven times a take.
    private static func totalSlots(_ cost: TaskCost, of loads: UnsafeBufferPointer<Load>) -> Int {
        var total = 0
        for load in loads.indices where loads[load].offered { total += loads[load].budgets[cost] }
        return total
    }

    /// Tasks in flight on `node`'s offered worker, of `cost` or (nil) of either; nil when
    /// no worker of that node is offered.
    public func inFlight(on node: String, cost: TaskCost? = nil) -> Int? {
        guard let load = workers.first(where: { $0.node == node && $0.offered }) else { return nil }
        return cost.map { load.inFlight[$0] } ?? load.inFlight.total
    }

    /// Offers a remote worker. The same worker again keeps its tasks in flight (and takes
    /// the budgets it announces now); another incarnation of the node replaces the old
    /// one's entry, whose tasks in flight stay counted on it until released.
    public mutating func add(node: String, worker: Worker, budgets: TaskBudgets) {
        guard node != workers[0].node else { return }
        for index in workers.indices where workers[index].node == node && workers[index].worker != worker {
            workers[index].offered = false
        }
        if let index = workers.firstIndex(where: { $0.worker == worker }) {
            workers[index].offered = true
            workers[index].budgets = budgets
        } else {
            workers.append(Load(node: node, worker: worker, budgets: budgets))
        }
        pruneDrained()
    }

    /// Stops offering `node`'s remote worker; its tasks in flight stay counted until
    /// released (they fail through their connection).
    public mutating func remove(node: String) {
        guard node != workers[0].node else { return }
        for index in workers.indices where workers[index].node == node { workers[index].offered = false }
        pruneDrained()
    }

    /// The place a task of `cost` takes now, counted as in flight; nil (and nothing
    /// counted) when no worker has room for it. See the type's rules.
    public mutating func take(_ cost: TaskCost, avoiding: String? = nil, stillToSend: Int = .max, now: Double) -> Grant? {
        let chosen = workers.withUnsafeBufferPointer { Self.choose(cost, in: $0, avoiding: avoiding, stillToSend: stillToSend, now: now) }
        guard let index = chosen else { return nil }
        let queued = workers[index].inFlight[cost] >= workers[index].budgets[cost]
        workers[index].inFlight[cost] += 1
        if workers[index].busyUntil[cost] != nil { workers[index].busyUntil[cost] = nil }
        return Grant(node: workers[index].node, worker: workers[index].worker, isLocal: index == 0, isQueued: queued, cost: cost)
    }

    /// The index of the worker ``take(_:avoiding:stillToSend:now:)`` takes, by the type's rules.
    private static func choose(
        _ cost: TaskCost, in loads: UnsafeBufferPointer<Load>, avoiding: String?, stillToSend: Int, now: Double
    ) -> Int? {
        let queueing = stillToSend >= totalSlots(cost, of: loads)
        // `avoiding` is skipped only while another worker is offered.
        let othersOffered = loads.indices.contains { loads[$0].offered && loads[$0].node != avoiding }
        // One pass, in list order, over the open workers (offered, not avoided, not
        // cooling down): for cpu the first with a free slot, else the first with a queue
        // place; for waiting the least loaded of each (the first of equals).
        var withSlot: Int?, withPlace: Int?
        for index in loads.indices {
            guard loads[index].offered, !othersOffered || loads[index].node != avoiding else { continue }
            if let until = loads[index].busyUntil[cost], now < until { continue }
            let inFlight = loads[index].inFlight[cost]
            if inFlight < loads[index].budgets[cost], withSlot.map({ cost == .waiting && isLessLoaded(index, than: $0, in: loads, cost: cost, counting: .budget) }) ?? true {
                withSlot = index
            }
            if queueing, inFlight < loads[index].places(cost), withPlace.map({ cost == .waiting && isLessLoaded(index, than: $0, in: loads, cost: cost, counting: .places) }) ?? true {
                withPlace = index
            }
        }
        return withSlot ?? withPlace
    }

    /// What a worker's load is measured against: its budget, or its budget and queue places.
    private enum Capacity { case budget, places }

    /// Whether worker `a` has fewer tasks of `cost` in flight for its capacity than
    /// worker `b` (strictly: of equals, the one met first stays chosen).
    private static func isLessLoaded(_ a: Int, than b: Int, in loads: UnsafeBufferPointer<Load>, cost: TaskCost, counting capacity: Capacity) -> Bool {
        func of(_ index: Int) -> Int {
            max(1, capacity == .budget ? loads[index].budgets[cost] : loads[index].places(cost))
        }
        // inFlight_a / capacity_a < inFlight_b / capacity_b, without dividing.
        return loads[a].inFlight[cost] * of(b) < loads[b].inFlight[cost] * of(a)
    }

    /// Gives back a place: the task ended, failed or was cancelled.
    public mutating func release(_ grant: Grant) {
        if let index = index(of: grant.worker) {
            workers[index].inFlight[grant.cost] = max(0, workers[index].inFlight[grant.cost] - 1)
        }
        pruneDrained()
    }

    /// Gives back a place on a worker that answered busy at `now`: it is skipped for that
    /// cost for ``busyCooldown`` seconds. Returns when the cool-down ends, when a caller
    /// waiting for a place should look again.
    public mutating func releaseBusy(_ grant: Grant, now: Double) -> Double {
        let until = now + busyCooldown
        if let index = index(of: grant.worker) {
            workers[index].inFlight[grant.cost] = max(0, workers[index].inFlight[grant.cost] - 1)
            workers[index].busyUntil[grant.cost] = until
        }
        pruneDrained()
        return until
    }

    /// Where `worker` is in the list, if it is.
    private func index(of worker: Worker) -> Int? {
        workers.withUnsafeBufferPointer { loads in loads.indices.first { loads[$0].worker == worker } }
    }

    /// Forgets remote workers no longer offered once nothing is in flight on them (the
    /// local one stays first, offered or not).
    private mutating func pruneDrained() {
        // Rebuilt only when one is drained: this runs at every release.
        let drained = workers.withUnsafeBufferPointer { loads in
            loads.indices.dropFirst().contains { !loads[$0].offered && loads[$0].inFlight.total == 0 }
        }
        guard drained else { return }
        workers = [workers[0]] + workers.dropFirst().filter { $0.offered || $0.inFlight.total > 0 }
    }
}
