/// A parameter a sweep can vary: its flag, its JSON key and its limits, in one place.
///
/// The cases are in expansion order (see ``SweepPlan``): `users` varies slowest and
/// `seed` fastest, so the runs of one group (same parameters, different seeds) are
/// consecutive.
public enum SweepParameter: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    case users
    case paths
    case goal
    case moveTime
    case timeScale
    case seed

    /// The parameters a group shares: all but the seed.
    public static let grouping: [SweepParameter] = [.users, .paths, .goal, .moveTime, .timeScale]

    /// The key of a run's parameter in JSON, the same as `simulate --json`'s where it has one.
    public var key: String { rawValue }

    /// The command-line flag, without its dashes: `users`, `seeds`, `move-time`, ...
    public var flag: String {
        switch self {
        case .users: "users"
        case .paths: "paths"
        case .goal: "goal"
        case .moveTime: "move-time"
        case .timeScale: "time-scale"
        case .seed: "seeds"
        }
    }

    /// How people read the parameter: `users`, `move time`, ...
    public var name: String {
        switch self {
        case .users: "users"
        case .paths: "paths"
        case .goal: "goal"
        case .moveTime: "move time"
        case .timeScale: "time scale"
        case .seed: "seed"
        }
    }

    public var description: String { "--\(flag)" }

    /// The list a sweep uses when the parameter is not given; nil when it must be given
    /// (the seeds). Sweep runs are CPU work, so time runs flat out (scale 0) unless asked.
    public var defaultList: String? {
        switch self {
        case .users: "200"
        case .paths: "10"
        case .goal: nil
        case .moveTime: MoveTiming().moveTime.formatted
        case .timeScale: "0"
        case .seed: nil
        }
    }

    /// Accepted whole numbers: the maxima are ``SimulationOptions``'s; users and paths
    /// start at 1 as `spokes simulate`'s flags do (a run of no users has no per-user
    /// figure), and seeds stop at `Int.max` as `--seed` does, so any run can be
    /// repeated with `spokes simulate --seed`. Nil for parameters that are not integers.
    public var integerRange: ClosedRange<Int>? {
        switch self {
        case .users: 1...SimulationOptions.maximumUsers
        case .paths: 1...SimulationOptions.maximumPaths
        case .seed: 0...Int.max
        case .goal, .moveTime, .timeScale: nil
        }
    }

    /// Accepted numbers, from ``SimulationOptions``. Nil for parameters that are not
    /// decimal numbers.
    public var numberRange: ClosedRange<Double>? {
        switch self {
        case .moveTime: 0...SimulationOptions.maximumMoveTime
        case .timeScale: 0...SimulationOptions.maximumTimeScale
        case .users, .paths, .seed, .goal: nil
        }
    }
}
