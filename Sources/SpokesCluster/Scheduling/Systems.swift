/// A coordinator's view of every worker it may use, its own first: the book's `Systems`.
///
/// `firstAvailableSystem()` returns the first system with room and commits it (counts
/// the place as taken by this coordinator). A system has room for its slots plus its
/// queue (``ScanSystem/queueLength(slots:)``): every slot first, then, on every system,
/// the queue places, so a worker always has its next task waiting when one ends. When
/// there is no room it waits, without polling, until a place is released, a system
/// joins, or a busy system's short cool-down ends. A worker that answered busy (another
/// coordinator filled it) is skipped for `busyCooldown` seconds.
///
/// Invariant: a worker is never sent more tasks than its slots plus queue places,
/// whatever membership does. Places are counted per worker (its actor id, so per
/// incarnation of a node), not per entry in the list: a system removed while tasks are in
/// flight on it stays counted (not offered) until they are released, and adding it again
/// (a member that flapped between states) finds its count where it was. A new
/// incarnation of a node is another worker and starts with none in flight.
public actor Systems {
    /// A slot this coordinator holds on one system, until ``Systems/release(_:)``.
    public struct Commitment: Sendable {
        public let node: String
        public let system: ScanSystem
        public let isLocal: Bool
        /// Taken beyond the system's slots: the task may wait in the worker's queue
        /// (at most until one of the tasks ahead of it ends).
        public let isQueued: Bool
    }

    private struct Entry {
        let node: String
        let system: ScanSystem
        let slots: Int
        var inFlight = 0
        var busyUntil: ContinuousClock.Instant?
        /// False once removed (or replaced by a new incarnation): no longer offered, kept
        /// only while tasks are in flight on it.
        var offered = true

        var places: Int { slots + ScanSystem.queueLength(slots: slots) }
    }

    /// The local system first, then remote ones in the order they joined.
    private var entries: [Entry]
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private let clock = ContinuousClock()
    public let busyCooldown: Duration

    /// Starts with the local system only.
    public init(local system: ScanSystem, node: String, slots: Int, busyCooldown: Duration = .milliseconds(20)) {
        entries = [Entry(node: node, system: system, slots: slots)]
        self.busyCooldown = busyCooldown
    }

    /// Slots of every system offered now.
    public var totalSlots: Int { entries.reduce(0) { $0 + ($1.offered ? $1.slots : 0) } }

    /// Names of the systems offered now, the local one first.
    public var nodes: [String] { entries.filter(\.offered).map(\.node) }

    /// Tasks this coordinator has in flight on `node`'s offered system (nil when none is offered).
    public func inFlight(on node: String) -> Int? {
        entries.first { $0.node == node && $0.offered }?.inFlight
    }

    /// Callers waiting in ``firstAvailableSystem(avoiding:stillToSend:)`` or
    /// ``waitForSystems(atLeast:)`` now: a state tests await instead of sleeping.
    public var waitingCount: Int { waiters.count }

    /// Offers a remote system. The same worker again keeps its tasks in flight; another
    /// incarnation of the node replaces the old one's entry (whose tasks in flight stay
    /// counted on it until released).
    public func addSystem(node: String, system: ScanSystem, slots: Int) {
        guard node != entries[0].node else { return }
        for index in entries.indices where entries[index].node == node && entries[index].system.id != system.id {
            entries[index].offered = false
        }
        if let index = entries.firstIndex(where: { $0.system.id == system.id }) {
            entries[index].offered = true
        } else {
            entries.append(Entry(node: node, system: system, slots: max(1, slots)))
        }
        pruneDrained()
        wakeAll()
    }

    /// Stops offering a remote system; its in-flight tasks fail through their connection
    /// and are released as they do.
    public func removeSystem(node: String) {
        guard node != entries[0].node else { return }
        for index in entries.indices where entries[index].node == node { entries[index].offered = false }
        pruneDrained()
        // A retry waiting to avoid this node may now take any system.
        wakeAll()
    }

    /// Forgets systems no longer offered once nothing is in flight on them.
    private func pruneDrained() {
        entries.removeAll { !$0.offered && $0.inFlight == 0 }
    }

    /// The first system with room, committed, local first. A retry passes the node its
    /// last attempt failed on as `avoiding`: that node is skipped while any other system
    /// is known, so a task lost with a dead node restarts on a live one.
    ///
    /// `stillToSend` is how many tasks the caller will ask for after this one. Queue
    /// places are handed out only while that is a whole round or more (a task per slot
    /// of every system): near the end a task waiting in one worker's queue while another
    /// worker's slots stand empty would add a round to the job. Retries pass 0.
    public func firstAvailableSystem(avoiding: String? = nil, stillToSend: Int = .max) async throws -> Commitment {
        while true {
            try Task.checkCancellation()
            if let commitment = commitFirstOpen(avoiding: avoiding, stillToSend: stillToSend) { return commitment }
            await withTaskCancellationHandler {
                await withCheckedContinuation { waiters.append($0) }
            } onCancel: {
                Task { await self.wakeAll() }
            }
        }
    }

    /// What ``firstAvailableSystem(avoiding:stillToSend:)`` would take now, committed;
    /// nil (and nothing committed) when no system has room.
    public func commitFirstOpen(avoiding: String? = nil, stillToSend: Int = .max) -> Commitment? {
        let queueing = stillToSend >= totalSlots
        let now = clock.now
        let offered = entries.indices.filter { entries[$0].offered }
        let others = offered.filter { entries[$0].node != avoiding }
        let candidates = others.isEmpty ? offered : others
        let open = candidates.filter { entries[$0].busyUntil.map { now >= $0 } ?? true }
        guard let index = open.first(where: { entries[$0].inFlight < entries[$0].slots })
            ?? open.first(where: { queueing && entries[$0].inFlight < entries[$0].places }) else { return nil }
        let queued = entries[index].inFlight >= entries[index].slots
        entries[index].inFlight += 1
        entries[index].busyUntil = nil
        return Commitment(node: entries[index].node, system: entries[index].system, isLocal: index == 0, isQueued: queued)
    }

    /// Waits until at least `count` systems are offered (woken by each addition).
    public func waitForSystems(atLeast count: Int) async throws {
        while nodes.count < count {
            try Task.checkCancellation()
            await withTaskCancellationHandler {
                await withCheckedContinuation { waiters.append($0) }
            } onCancel: {
                Task { await self.wakeAll() }
            }
        }
    }

    /// Gives back a committed slot.
    public func release(_ commitment: Commitment) {
        if let index = entries.firstIndex(where: { $0.system.id == commitment.system.id }) {
            entries[index].inFlight = max(0, entries[index].inFlight - 1)
        }
        pruneDrained()
        wakeAll()
    }

    /// Gives back a slot on a worker that answered busy, and skips it for a moment.
    public func releaseBusy(_ commitment: Commitment) {
        if let index = entries.firstIndex(where: { $0.system.id == commitment.system.id }) {
            entries[index].inFlight = max(0, entries[index].inFlight - 1)
            entries[index].busyUntil = clock.now + busyCooldown
        }
        pruneDrained()
        let cooldown = busyCooldown
        Task {
            try? await Task.sleep(for: cooldown)
            self.wakeAll()
        }
    }

    private func wakeAll() {
        let woken = waiters
        waiters.removeAll()
        for waiter in woken { waiter.resume() }
    }
}
