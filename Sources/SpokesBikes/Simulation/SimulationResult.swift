/// What one user's run came to.
///
/// `waitingTime` and `paths` are the original project's result; the rest are the counts
/// a person studying contention wants. Times are nominal seconds (see ``MoveTiming``).
public struct SimulationResult: Sendable, Hashable, Codable {
    /// How a user's run ended.
    public enum Ending: String, Sendable, Hashable, Codable {
        /// Rode every path it was given.
        case finishedPaths
        /// Left a bike at its goal station.
        case reachedGoal
        /// Made `maxMoves` moves without finishing (the network could not serve it).
        case gaveUp
        /// The run was cancelled (Ctrl-C).
        case cancelled
        /// On a cluster: every attempt failed (see the report's `failedUsers`).
        case failed
    }

    public var user: Int
    /// Bikes left at a station: one per ride.
    public var paths: Int = 0
    /// Nominal seconds spent moving on because a station had no bike or no slot.
    public var waitingTime: Double = 0
    /// Stations arrived at.
    public var moves: Int = 0
    /// Arrivals on foot at a station with no free bike.
    public var failedTakes: Int = 0
    /// Arrivals by bike at a station with no empty slot.
    public var failedLeaves: Int = 0
    public var ending: Ending = .finishedPaths
    /// True when the run ended with the user still riding (only when cancelled or gave up).
    public var holdsBike: Bool = false

    /// On a cluster: the node whose worker produced the result; nil in one process.
    public var node: String?
    /// On a cluster: how many attempts the user took; nil in one process.
    public var attempts: Int?

    public init(user: Int) {
        self.user = user
    }

    /// The result of a user that got as far as `progress` and ended with `ending`.
    public init(user: Int, progress: UserProgress, ending: Ending, moveTime: Double) {
        self.user = user
        paths = progress.paths
        moves = progress.moves
        failedTakes = progress.failedTakes
        failedLeaves = progress.failedLeaves
        waitingTime = Double(progress.failedTakes + progress.failedLeaves) * moveTime
        self.ending = ending
        holdsBike = progress.hasBike
    }

    /// The user's run came to its natural end (all paths ridden or goal reached).
    public var completed: Bool { ending == .finishedPaths || ending == .reachedGoal }
}
