/// A snapshot of a running simulation, delivered each time a user finishes.
public struct SimulationProgress: Sendable, Hashable {
    public var usersDone: Int
    public var usersTotal: Int
    public var pathsRidden: Int
    /// Real seconds since the run started.
    public var elapsed: Double

    public init(usersDone: Int, usersTotal: Int, pathsRidden: Int, elapsed: Double) {
        self.usersDone = usersDone
        self.usersTotal = usersTotal
        self.pathsRidden = pathsRidden
        self.elapsed = elapsed
    }

    /// Users finished per real second so far.
    public var rate: Double { elapsed > 0 ? Double(usersDone) / elapsed : 0 }

    /// Real seconds until the last user is likely done, at the current rate; nil before
    /// the first user finishes.
    public var estimatedRemaining: Double? {
        rate > 0 ? Double(usersTotal - usersDone) / rate : nil
    }
}
