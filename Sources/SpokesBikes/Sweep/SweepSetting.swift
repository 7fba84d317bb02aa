/// The parameters a group of runs shares: everything but the seed. A run is a setting
/// and a seed (``SweepRun``).
///
/// Encoded under the flags' names (`users`, `paths`, `goal`, `moveTime`, `timeScale`)
/// plus `maxMoves`; `goal` is absent when users ride every path.
public struct SweepSetting: Sendable, Hashable, Codable {
    public var users: Int
    public var paths: Int
    /// Station id at which a user stops once it leaves a bike there; nil rides every path.
    public var goal: String?
    public var moveTime: Double
    public var timeScale: Double
    /// Moves after which a user gives up (one value for the whole sweep).
    public var maxMoves: Int

    public init(users: Int, paths: Int, goal: String? = nil, moveTime: Double = 0.1, timeScale: Double = 0, maxMoves: Int = 1_000_000) {
        self.users = users
        self.paths = paths
        self.goal = goal
        self.moveTime = moveTime
        self.timeScale = timeScale
        self.maxMoves = maxMoves
    }

    /// The value of `parameter`; nil for the seed, which is not part of a setting.
    public func value(of parameter: SweepParameter) -> SweepValue? {
        switch parameter {
        case .users: .integer(users)
        case .paths: .integer(paths)
        case .goal: .station(goal)
        case .moveTime: .number(moveTime)
        case .timeScale: .number(timeScale)
        case .seed: nil
        }
    }
}
