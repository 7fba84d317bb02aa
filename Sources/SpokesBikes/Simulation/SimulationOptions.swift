/// The workload of one simulation: how many users, how far each rides, and how time runs.
public struct SimulationOptions: Sendable, Hashable, Codable {
    /// Largest accepted `users`: enough for any single machine, small enough to refuse typos.
    public static let maximumUsers = 1_000_000
    /// Largest accepted `paths` per user.
    public static let maximumPaths = 1_000_000
    /// Largest accepted `timeScale` (a move of 0.1 s would then sleep 100 s).
    public static let maximumTimeScale = 1_000.0
    /// Largest accepted `moveTime`, in nominal seconds (one day).
    public static let maximumMoveTime = 86_400.0

    public var users: Int
    public var paths: Int
    /// Station id at which a user stops once it leaves a bike there; nil rides every path.
    public var goal: String?
    public var seed: UInt64
    public var timing: MoveTiming
    /// Users running at once; nil runs every user at once, as the original project did.
    /// With 1, a seed reproduces the run exactly.
    public var workers: Int?
    /// Moves after which a user gives up (see ``BikeUser/maxMoves``).
    public var maxMovesPerUser: Int

    public init(
        users: Int, paths: Int, goal: String? = nil, seed: UInt64 = 0,
        timing: MoveTiming = MoveTiming(), workers: Int? = nil, maxMovesPerUser: Int = 1_000_000
    ) {
        self.users = users
        self.paths = paths
        self.goal = goal
        self.seed = seed
        self.timing = timing
        self.workers = workers
        self.maxMovesPerUser = maxMovesPerUser
    }

    /// Checks these options against `network`, throwing the first problem found.
    public func validate(for network: Network) throws(SimulationError) {
        try Self.check("users", users, in: 0...Self.maximumUsers)
        try Self.check("paths", paths, in: 0...Self.maximumPaths)
        try Self.check("move time", timing.moveTime, in: 0...Self.maximumMoveTime, unit: " seconds")
        try Self.check("time scale", timing.timeScale, in: 0...Self.maximumTimeScale)
        if let workers { try Self.check("workers", workers, in: 1...Self.maximumUsers) }
        try Self.check("max moves per user", maxMovesPerUser, in: 1...Int.max)
        guard !network.stations.isEmpty else { throw .noStations(network: network.id) }
        if users > 0, paths > 0, network.totalFreeBikes == 0 { throw .noBikes(network: network.id) }
        if let goal, !network.stations.contains(where: { $0.id == goal }) {
            throw .unknownGoal(goal, network: network.id)
        }
    }

    private static func check(_ name: String, _ value: Int, in range: ClosedRange<Int>) throws(SimulationError) {
        guard range.contains(value) else {
            let expected = range.upperBound == Int.max ? "at least \(range.lowerBound)" : "\(range.lowerBound) to \(range.upperBound)"
            throw .invalidSetting(name: name, value: "\(value)", expected: expected)
        }
    }

    private static func check(
        _ name: String, _ value: Double, in range: ClosedRange<Double>, unit: String = ""
    ) throws(SimulationError) {
        guard value.isFinite, range.contains(value) else {
            throw .invalidSetting(
                name: name, value: "\(value)",
                expected: "a number from \(range.lowerBound.formatted) to \(range.upperBound.formatted)\(unit)")
        }
    }
}

extension Double {
    /// "0.1", "1000": no trailing ".0" for whole numbers.
    var formatted: String {
        rounded() == self && abs(self) < 1e15 ? String(Int(self)) : String(self)
    }
}
