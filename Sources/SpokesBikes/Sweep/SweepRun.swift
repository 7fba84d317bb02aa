/// One run of a sweep: a whole simulation with one setting and one seed.
///
/// Encoded flat, under the flags' names: `users`, `paths`, `goal`, `moveTime`,
/// `timeScale`, `maxMoves`, `seed`.
public struct SweepRun: Sendable, Hashable, Codable {
    public var setting: SweepSetting
    public var seed: UInt64

    public init(setting: SweepSetting, seed: UInt64) {
        self.setting = setting
        self.seed = seed
    }

    /// The options `spokes simulate --workers 1` would run with: one user at a time, so
    /// the seed fixes every figure.
    public var options: SimulationOptions {
        SimulationOptions(
            users: setting.users, paths: setting.paths, goal: setting.goal, seed: seed,
            timing: MoveTiming(moveTime: setting.moveTime, timeScale: setting.timeScale), workers: 1,
            maxMovesPerUser: setting.maxMoves)
    }

    /// The value of `parameter` in this run.
    public func value(of parameter: SweepParameter) -> SweepValue {
        setting.value(of: parameter) ?? .integer(Int(clamping: seed))
    }

    /// Checks the parameters against the limits of ``SweepParameter`` (a task input
    /// comes from a peer) and `SimulationOptions.validate` against `network`.
    public func validate(for network: Network) throws(SweepPlanError) {
        for (parameter, value) in [(SweepParameter.users, setting.users), (.paths, setting.paths)] {
            if let range = parameter.integerRange, !range.contains(value) {
                throw .outOfRange(parameter, item: "\(value)", expected: "\(range.lowerBound) to \(range.upperBound)")
            }
        }
        guard seed <= UInt64(Int.max) else { throw .outOfRange(.seed, item: "\(seed)", expected: "at most \(Int.max)") }
        do {
            try options.validate(for: network)
        } catch {
            throw .simulation(error)
        }
    }

    enum CodingKeys: String, CodingKey { case seed }

    public init(from decoder: any Decoder) throws {
        setting = try SweepSetting(from: decoder)
        seed = try decoder.container(keyedBy: CodingKeys.self).decode(UInt64.self, forKey: .seed)
    }

    public func encode(to encoder: any Encoder) throws {
        try setting.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(seed, forKey: .seed)
    }
}
