import SpokesConcurrency

/// A coordinator's view of every worker it may use, its own first (the SkyNet book calls
/// it `Systems`): where the next task of a job goes. The rules are ``Placement``'s, a
/// pure state machine; this actor is its shell. It reads the clock, and keeps only the
/// callers waiting for a place, woken without polling when a place is released, a worker
/// joins, or a busy worker's cool-down ends.
///
/// A caller asks for a place for a task of a given cost with
/// `firstAvailableSystem(for: cost, avoiding:stillToSend:)`: it returns a ``Commitment``
/// (the node, its ``ScanSystem``, whether the task may wait in the worker's queue) once a
/// worker has room, and the caller sends the task there with the same cost in its
/// ``TaskRequest``, then gives the place back with ``release(_:)``, or with
/// ``releaseBusy(_:)`` when the worker answered busy. ``JobRunner`` does all of this.
public actor Systems {
    /// A place this coordinator holds on one worker, until ``Systems/release(_:)``.
    public typealias Commitment = Placement<ScanSystem>.Grant

    private var placement: Placement<ScanSystem> {
        didSet { placementChanges.bump() }
    }
    /// How many times the placement (``loads``) changed: a reader that saw the same count
    /// before has seen the loads as they stand, without a hop onto this actor.
    public nonisolated let placementChanges = ChangeCount()
    private var waiters: [CheckedContinuation<Void, Never>] = []
    /// The node's runtime clock: the busy cool-down's, and its coordinators' deadlines.
    public nonisolated let clock: any RuntimeClock
    private func now() -> Double { clock.now }

    /// Starts with the local worker, with its budgets (`slots` cpu slots and
    /// `waitingSlots` waiting slots), then `others`, the remote workers known now, as
    /// ``addSystem(node:system:slots:waitingSlots:)`` would add them: so the first task
    /// already sees them (with thousands of waiting slots, the local worker alone would
    /// take a whole job before an addition arrives). A worker that answered busy is
    /// skipped for that cost for `busyCooldown`, on `clock` (the node's runtime's).
    /// `localOffered` false: the local worker does not run the job's kind and gets none
    /// of its tasks.
    public init(
        local system: ScanSystem, node: String, slots: Int, waitingSlots: Int = ClusterSettings.defaultWaitingSlots,
        others: [(node: String, system: ScanSystem, slots: Int, waitingSlots: Int)] = [],
        busyCooldown: Duration = .milliseconds(20), localOffered: Bool = true, clock: any RuntimeClock = RealClock()
    ) {
        let cooldown = Double(busyCooldown.components.seconds) + Double(busyCooldown.components.attoseconds) / 1e18
        placement = Placement(
            local: system, node: node, budgets: TaskBudgets(cpu: slots, waiting: waitingSlots), busyCooldown: cooldown, localOffered: localOffered)
        for other in others {
            placement.add(node: other.node, worker: other.system, budgets: Self.budgets(slots: other.slots, waitingSlots: other.waitingSlots))
        }
        self.clock = clock
    }

    /// A remote member's budgets as announced (at least one cpu slot, as before budgets
    /// were announced per cost).
    private static func budgets(slots: Int, waitingSlots: Int) -> TaskBudgets {
        TaskBudgets(cpu: max(1, slots), waiting: max(0, waitingSlots))
    }

    /// Cpu slots of every system offered now.
    public var totalSlots: Int { placement.totalSlots(.cpu) }

    /// Slots of `cost` of every system offered now.
    public func totalSlots(for cost: TaskCost) -> Int { placement.totalSlots(cost) }

    /// Names of the systems offered now, the local one first.
    public var nodes: [String] { placement.nodes }

    /// Every worker as this coordinator counts it (budgets, tasks in flight, offered).
    public var loads: [Placement<ScanSystem>.Load] { placement.workers }

    /// Tasks this coordinator has in flight on `node`'s offered system, of `cost` or (nil)
    /// of either; nil when none is offered.
    public func inFlight(on node: String, cost: TaskCost? = nil) -> Int? {
        placement.inFlight(on: node, cost: cost)
    }

    /// Callers waiting in ``firstAvailableSystem(for:avoiding:stillToSend:)`` or
    /// ``waitForSystems(atLeast:)`` now: a state tests await instead of sleeping.
    public var waitingCount: Int { waiters.count }

    /// Offers a remote system with the budgets its node announced. The same worker again
    /// keeps its tasks in flight; another incarnation of the node replaces the old one's
    /// entry (whose tasks in flight stay counted on it until released).
    public func addSystem(node: String, system: ScanSystem, slots: Int, waitingSlots: Int = ClusterSettings.defaultWaitingSlots) {
        placement.add(node: node, worker: system, budgets: Self.budgets(slots: slots, waitingSlots: waitingSlots))
        wakeAll()
    }

    /// Stops offering a remote system; its in-flight tasks fail through their connection
    /// and are released as they do.
    public func removeSystem(node: String) {
        placement.remove(node: node)
        // A retry waiting to avoid this node may now take any system.
        wakeAll()
    }

    /// A place for a task of `cost`, waiting until a system has room (see ``Placement``
    /// for which one). A retry passes the node its last attempt failed on as `avoiding`.
    /// `stillToSend` is how many tasks the caller will ask for after this one (queue places
    /// are handed out only while that is a whole round or more); retries pass 0.
    public func firstAvailableSystem(for cost: TaskCost = .cpu, avoiding: String? = nil, stillToSend: Int = .max) async throws -> Commitment {
        try await place(for: cost, avoiding: avoiding, stillToSend: stillToSend).commitment
    }

    /// A place as ``firstAvailableSystem(for:avoiding:stillToSend:)`` takes one, and
    /// whether the caller had to wait for it (a task that waited is ready to run only once
    /// it has its place: ``TaskRequest/readyAgo``).
    public func place(for cost: TaskCost = .cpu, avoiding: String? = nil, stillToSend: Int = .max) async throws -> (commitment: Commitment, waited: Bool) {
        var waited = false
        while true {
            try Task.checkCancellation()
            if let commitment = commitFirstOpen(for: cost, avoiding: avoiding, stillToSend: stillToSend) { return (commitment, waited) }
            await park()
            waited = true
        }
    }

    /// What ``firstAvailableSystem(for:avoiding:stillToSend:)`` would take now, committed;
    /// nil (and nothing committed) when no system has room.
    public func commitFirstOpen(for cost: TaskCost = .cpu, avoiding: String? = nil, stillToSend: Int = .max) -> Commitment? {
        placement.take(cost, avoiding: avoiding, stillToSend: stillToSend, now: now())
    }

    /// Waits until at least `count` systems are offered (woken by each addition).
    public func waitForSystems(atLeast count: Int) async throws {
        while placement.nodes.count < count {
            try Task.checkCancellation()
            await park()
        }
    }

    /// Gives back a committed place.
    public func release(_ commitment: Commitment) {
        placement.release(commitment)
        wakeAll()
    }

    /// Gives back a place on a worker that answered busy, and skips it for that cost for
    /// a moment (then wakes the callers waiting, so they look again).
    public func releaseBusy(_ commitment: Commitment) {
        let until = placement.releaseBusy(commitment, now: now())
        let wait = until - now()
        let clock = clock
        Task {
            try? await clock.sleep(for: wait)
            self.wakeAll()
        }
    }

    /// Waits until woken (or cancelled).
    private func park() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { waiters.append($0) }
        } onCancel: {
            Task { await self.wakeAll() }
        }
    }

    private func wakeAll() {
        let woken = waiters
        waiters.removeAll()
        for waiter in woken { waiter.resume() }
    }
}

extension Placement.Grant where Worker == ScanSystem {
    /// The worker to send the task to.
    public var system: ScanSystem { worker }
}
