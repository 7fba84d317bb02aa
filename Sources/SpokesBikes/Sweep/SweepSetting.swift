/// The parameters a group of runs shares: everything but the seed. A run is a setting
/// and a seed (``SweepRun``).
///
/// Encoded under the flags' names (`users`, `paths`, `goal`, `moveTime`, `timeScale`)
/// plus `maxMoves`; `goal` is absent when users ride every path.
public struct SweepSetting: Sendable, Hashable, Codable {
    /// `SimulationOptions`' moves before a user gives up, the default of every sweep.
    public static let defaultMaxMoves = SimulationOptions(users: 0, paths: 0).maxMovesPerUser

    public var users: Int
    public var paths: Int
    /// Station id at which a user stops once it leaves a bike there; nil rides every path.
    public var goal: String?
    public var moveTime: Double
    public var timeScale: Double
    /// Moves after which a user gives up (one value for the whole sweep).
    public var maxMoves: Int

    public init(users: Int, paths: Int, goal: String? = nil, moveTime: Double = MoveTiming().moveTime, timeScale: Double = 0, maxMoves: Int = defaultMaxMoves) {
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

    /// One parameter in words: `users 200`, `move time 0.1 s`, `goal none`.
    public func label(of parameter: SweepParameter) -> String {
        guard let value = value(of: parameter) else { return parameter.name }
        return "\(parameter.name) \(value)\(parameter == .moveTime ? " s" : "")"
    }

    /// The whole setting in words, as summaries title a group:
    /// `users 200 · paths 10 · move time 0.1 s · time scale 0`, with the goal only when
    /// there is one and max moves only when it is not `SimulationOptions`' default.
    public var label: String {
        var parts = SweepParameter.grouping.filter { $0 != .goal || goal != nil }.map(label(of:))
        if maxMoves != Self.defaultMaxMoves { parts.append("max moves \(maxMoves)") }
        return parts.joined(separator: " · ")
    }
}
