/// A number per ``TaskCost``: a worker's budgets (how many tasks of each cost it runs at
/// once: its cpu slots and its waiting slots), or how many of each are in use or in flight.
public struct TaskBudgets: Sendable, Hashable, Codable {
    /// Cpu slots (`node.slots`).
    public var cpu: Int
    /// Waiting slots (`node.waiting_slots`).
    public var waiting: Int

    public init(cpu: Int, waiting: Int) {
        self.cpu = cpu
        self.waiting = waiting
    }

    /// Nothing of either cost.
    public static let zero = TaskBudgets(cpu: 0, waiting: 0)

    /// The number for `cost`.
    public subscript(cost: TaskCost) -> Int {
        get { cost == .cpu ? cpu : waiting }
        set { if cost == .cpu { cpu = newValue } else { waiting = newValue } }
    }

    /// Both numbers added up.
    public var total: Int { cpu + waiting }
}
