import SpokesCluster
import FoundationEssentials
import SpokesBikes

/// The workload flags `simulate`, `submit` and `demo` share, and how they become a
/// network and ``SimulationOptions``. Each command may choose its own defaults for users
/// and time scale; everything else is declared once here.
struct WorkloadOptions: Sendable {
    static let maximumSyntheticStations = 100_000
    static let maximumDocksPerStation = 10_000
    /// Most moves a user may be given before it gives up.
    static let maximumMoves = 1_000_000_000

    let network = Option.string("network", "FILE", help: "A CityBikes network JSON file (default: the bundled Milano network).")
    let stations = Option.integer("stations", "N", in: 1...maximumSyntheticStations, help: "Simulate N identical synthetic stations instead of a network file.")
    let bikes = Option.integer("bikes", "B", in: 0...maximumDocksPerStation, help: "Free bikes at each synthetic station.")
    let slots = Option.integer("slots", "S", in: 0...maximumDocksPerStation, help: "Empty slots at each synthetic station.")
    let users: Option<Int>
    let paths = Option.integer("paths", "P", in: 1...SimulationOptions.maximumPaths, default: 10, help: "Rides per user (a ride ends when a bike is left).")
    let goal = Option.string("goal", "STATION_ID", help: "A user stops once it leaves a bike at this station.")
    let seed = Option.integer("seed", "N", in: 0...Int.max, help: "Seed for the users' random choices.", defaultText: "random, and printed")
    let moveTime = Option.number("move-time", "SECONDS", in: 0...SimulationOptions.maximumMoveTime, default: 0.1, help: "Nominal seconds per move between stations.")
    let timeScale: Option<Double>
    let maxMoves = Option.integer("max-moves", "N", in: 1...maximumMoves, default: 1_000_000, help: "Moves after which a user gives up.")

    /// The workload flags, with the defaults a command wants for users and time scale.
    init(users: Int = 200, timeScale: Double = 1) {
        self.users = Option.integer("users", "U", in: 1...SimulationOptions.maximumUsers, default: users, help: "Users riding at the same time.")
        self.timeScale = Option.number("time-scale", "X", in: 0...SimulationOptions.maximumTimeScale, default: timeScale,
                                       help: "Real sleep per move = move time x X; 1 is real time, 0 never sleeps.")
    }

    /// Every flag, in help order.
    var all: [any OptionDeclaration] { [network, stations, bikes, slots, users, paths, goal, seed, moveTime, timeScale, maxMoves] }

    /// The network the flags name: a file, a synthetic network, or the bundled Milano.
    func network(_ arguments: ParsedArguments) async throws -> Network {
        let counts = (stations: try arguments.value(stations), bikes: try arguments.value(bikes), slots: try arguments.value(slots))
        let synthetic = [stations, bikes, slots].filter { arguments.isSet($0) }.map(\.flagName)
        if let path = try arguments.value(network) {
            if let first = synthetic.first {
                throw UsageError("--network cannot be combined with \(first): give a network file or a synthetic network, not both")
            }
            return try await Service<City>.file(at: path).get().network
        }
        guard !synthetic.isEmpty else { return try BundledNetworks.milano }
        guard synthetic.count == 3 else {
            let missing = [stations, bikes, slots].map(\.flagName).filter { !synthetic.contains($0) }
            throw UsageError("a synthetic network needs --stations, --bikes and --slots; missing \(missing.joined(separator: ", "))")
        }
        return Network.synthetic(stations: counts.stations ?? 0, bikes: counts.bikes ?? 0, emptySlots: counts.slots ?? 0)
    }

    /// The users, paths, goal, seed and timing the flags ask for.
    func simulationOptions(_ arguments: ParsedArguments) throws -> SimulationOptions {
        let seed = try arguments.value(seed).map(UInt64.init) ?? UInt64.random(in: 0...UInt64(Int.max))
        return SimulationOptions(
            users: try arguments.value(users),
            paths: try arguments.value(paths),
            goal: try arguments.value(goal),
            seed: seed,
            timing: MoveTiming(moveTime: try arguments.value(moveTime), timeScale: try arguments.value(timeScale)),
            maxMovesPerUser: try arguments.value(maxMoves))
    }

    // The workload of `simulate` and `submit`, for commands that read it by these names.

    static let standard = WorkloadOptions()
    static var specs: [OptionSpec] { standard.all.map(\.spec) }

    static func network(_ arguments: ParsedArguments) async throws -> Network {
        try await standard.network(arguments)
    }

    static func simulationOptions(_ arguments: ParsedArguments) throws -> SimulationOptions {
        try standard.simulationOptions(arguments)
    }
}

/// The flags of a cluster job: how long a task may run and how often it is retried.
enum JobOptions {
    static let deadline = Option.number("deadline", "SECONDS", in: 0.001...86_400,
                                        help: "Seconds a user task may run before it is cancelled and retried.", defaultText: "the node's tasks.deadline")
    static let retries = Option.integer("retries", "N", in: 0...100,
                                        help: "Retries of a failed user task, each on another node.", defaultText: "the node's tasks.retries")
    static let owner = Option.string("owner", "NAME",
                                     help: "Whose job it is: the cluster's slots are shared equally between owners with work waiting.",
                                     defaultText: "$USER")
    static let priority = Option.integer("priority", "N", in: JobShare.priorities, default: JobShare.defaultPriority,
                                         help: "The job's weight among its owner's jobs (a node's jobs.max_priority lowers it).")
    static let maxSlots = Option.integer("max-slots", "N", in: 1...1_000_000,
                                         help: "At most N of the job's tasks run or wait at once, across the cluster.", defaultText: "no cap")

    /// The job's owner, priority and cap from `--owner`, `--priority` and `--max-slots`
    /// (the owner defaults to the submitting user's name in `environment`).
    static func share(_ arguments: ParsedArguments, environment: [String: String]) throws -> JobShare {
        let owner = try arguments.value(owner) ?? JobShare.submitter(environment: environment)
        guard owner.utf8.count <= JobShare.maximumOwnerBytes else {
            throw UsageError("--owner: at most \(JobShare.maximumOwnerBytes) bytes, got \(owner.utf8.count)")
        }
        return JobShare(owner: owner, priority: try arguments.value(priority), maxSlots: try arguments.value(maxSlots))
    }

    /// The three options, for a command's list.
    static let sharing: [any OptionDeclaration] = [owner, priority, maxSlots]
}
