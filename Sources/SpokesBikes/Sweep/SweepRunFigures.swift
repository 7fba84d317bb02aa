/// What one sweep run came to: the figures of its ``SimulationReport``, under the same
/// JSON keys as `spokes simulate --json`, without what every run of a sweep shares or
/// repeats at length (the network, the stations) and, unless asked for, without the
/// per-user `results`.
///
/// Every figure but `wallTime` is fixed by the run's parameters and seed.
public struct SweepRunFigures: Sendable, Hashable, Codable {
    public var completedUsers: Int
    public var usersReachedGoal: Int
    public var usersGaveUp: Int
    public var totalPaths: Int
    /// Nominal seconds, summed over users.
    public var totalWaitingTime: Double
    public var totalMoves: Int
    public var failedTakes: Int
    public var failedLeaves: Int
    /// Nominal seconds the longest user's run took.
    public var nominalDuration: Double
    /// Real seconds the run took on the node that ran it.
    public var wallTime: Double
    public var bikesBefore: Int
    public var bikesAfter: Int
    public var conservation: ConservationCheck
    /// One per user, by user number; only when the sweep asks for them.
    public var results: [SimulationResult]?

    /// The figures of `report`, with its per-user results or without.
    public init(_ report: SimulationReport, includingResults: Bool) {
        completedUsers = report.completedUsers
        usersReachedGoal = report.usersReachedGoal
        usersGaveUp = report.usersGaveUp
        totalPaths = report.totalPaths
        totalWaitingTime = report.totalWaitingTime
        totalMoves = report.totalMoves
        failedTakes = report.failedTakes
        failedLeaves = report.failedLeaves
        nominalDuration = report.nominalDuration
        wallTime = report.wallTime
        bikesBefore = report.bikesBefore
        bikesAfter = report.bikesAfter
        conservation = report.conservation
        results = includingResults ? report.results : nil
    }
}
