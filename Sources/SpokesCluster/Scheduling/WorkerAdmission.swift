/// A worker's slots and queues as a pure state machine: which attempts run, which wait,
/// which are turned away, and, when one ends, which waiting attempt takes its place.
/// ``ScanSystem`` is its shell: it parks and resumes the attempts this decides about, and
/// runs them. No clock, no I/O, so every rule is tested without a node and a simulator can
/// run many workers in one process.
///
/// A worker has a budget per ``TaskCost`` (``TaskBudgets``: its cpu slots and its waiting
/// slots) and, beside each, a short queue (``queueLength(places:)``: a tenth of the budget,
/// at least one). Rules, for each cost on its own:
/// - an attempt that arrives while the budget has room runs (``Decision/run``);
/// - otherwise it waits in that cost's queue, oldest first (``Decision/wait(_:)``), while
///   the queue has room; a coordinator sends a worker its next task before the current one
///   ends, so a slot never idles for a round trip (Dask's workers keep such a queue);
/// - otherwise it is turned away (``Decision/busy``): another coordinator filled the worker.
///   Several coordinators may send to one worker, which is why the worker enforces its
///   budgets itself;
/// - when a running attempt ends (``finish(_:)``), its place passes straight to the oldest
///   waiting attempt of the same cost, so a newcomer cannot overtake it; with none waiting
///   the place is free;
/// - a waiting attempt that is cancelled leaves the queue (``withdraw(_:)``) and holds nothing.
///
/// Invariant, per cost: `inUse <= budget`, `queued <= queueLength(places: budget)`, and
/// an attempt waits only while the budget is full.
public struct WorkerAdmission: Sendable {
    /// What happens to an attempt that arrives.
    public enum Decision: Sendable, Hashable {
        /// It holds a place now: run it.
        case run
        /// It waits in the queue; ``WorkerAdmission/finish(_:)`` names its ticket when it
        /// is given a place.
        case wait(Ticket)
        /// Budget and queue are full: answer ``TaskResult/busy``.
        case busy
    }

    /// A waiting attempt, in arrival order.
    public struct Ticket: Sendable, Hashable, Comparable {
        public let number: UInt64

        public static func < (lhs: Ticket, rhs: Ticket) -> Bool { lhs.number < rhs.number }
    }

    /// Places of each cost: how many attempts of it run at once.
    public let budgets: TaskBudgets
    /// Places of each cost held by running attempts (a place passed to a waiting attempt
    /// stays held).
    public private(set) var inUse = TaskBudgets.zero
    private var cpuQueue = TicketQueue()
    private var waitingQueue = TicketQueue()
    private var nextTicket: UInt64 = 1

    /// Queue places beside a budget of `places`: a tenth of them, at least one (as Dask
    /// saturates a worker at 1.1 x its threads), none beside no budget. Coordinators
    /// compute it from the budgets a member announces, so both sides agree without asking.
    public static func queueLength(places: Int) -> Int {
        places > 0 ? max(1, places / 10 + (places % 10 == 0 ? 0 : 1)) : 0
    }

    /// A worker with `budgets` (each at least 0) and nothing running.
    public init(budgets: TaskBudgets) {
        self.budgets = TaskBudgets(cpu: max(0, budgets.cpu), waiting: max(0, budgets.waiting))
    }

    /// Queue places of `cost`.
    public func queueLength(_ cost: TaskCost) -> Int { Self.queueLength(places: budgets[cost]) }

    /// Attempts of `cost` waiting now.
    public func queued(_ cost: TaskCost) -> Int { cost == .cpu ? cpuQueue.count : waitingQueue.count }

    /// Attempts waiting now, of either cost.
    public var queuedTotal: Int { cpuQueue.count + waitingQueue.count }

    /// An attempt of `cost` arrives.
    public mutating func arrive(_ cost: TaskCost) -> Decision {
        if inUse[cost] < budgets[cost] {
            inUse[cost] += 1
            return .run
        }
        guard queued(cost) < queueLength(cost) else { return .busy }
        let ticket = Ticket(number: nextTicket)
        nextTicket += 1
        if cost == .cpu { cpuQueue.append(ticket) } else { waitingQueue.append(ticket) }
        return .wait(ticket)
    }

    /// A running attempt of `cost` ended. Returns the waiting attempt that takes its place
    /// (the oldest of that cost), or nil when none waits and the place is free.
    public mutating func finish(_ cost: TaskCost) -> Ticket? {
        if let next = cost == .cpu ? cpuQueue.removeFirst() : waitingQueue.removeFirst() { return next }
        inUse[cost] = max(0, inUse[cost] - 1)
        return nil
    }

    /// A waiting attempt gave up (it was cancelled). True when it was waiting and has now
    /// left the queue; false when it was not (it already has a place, or never waited).
    public mutating func withdraw(_ ticket: Ticket) -> Bool {
        cpuQueue.remove(ticket) || waitingQueue.remove(ticket)
    }
}

/// Tickets in arrival order: appends and removals from the front in constant time
/// (amortised), so a queue of a hundred thousand waiting attempts stays cheap.
private struct TicketQueue: Sendable {
    private var items: [WorkerAdmission.Ticket] = []
    private var head = 0

    var count: Int { items.count - head }

    mutating func append(_ ticket: WorkerAdmission.Ticket) { items.append(ticket) }

    mutating func removeFirst() -> WorkerAdmission.Ticket? {
        guard head < items.count else { return nil }
        let first = items[head]
        head += 1
        if head > 64, head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        return first
    }

    /// Removes `ticket` wherever it waits; false when it is not here.
    mutating func remove(_ ticket: WorkerAdmission.Ticket) -> Bool {
        guard let index = items[head...].firstIndex(of: ticket) else { return false }
        items.remove(at: index)
        return true
    }
}
