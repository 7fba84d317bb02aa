import Foundation
import SpokesBikes

/// The workload flags `simulate` and `submit` share, and how they become a network and
/// ``SimulationOptions``.
enum WorkloadOptions {
    static let maximumSyntheticStations = 100_000
    static let maximumDocksPerStation = 10_000

    static let specs = specs()

    /// The workload flags, with the defaults a command wants for users and time scale.
    static func specs(users: Int = 200, timeScale: String = "1") -> [OptionSpec] { [
        .value("network", "FILE", help: "A CityBikes network JSON file (default: the bundled Milano network)."),
        .value("stations", "N", help: "Simulate N identical synthetic stations instead of a network file."),
        .value("bikes", "B", help: "Free bikes at each synthetic station."),
        .value("slots", "S", help: "Empty slots at each synthetic station."),
        .value("users", "U", help: "Users riding at the same time.", default: "\(users)"),
        .value("paths", "P", help: "Rides per user (a ride ends when a bike is left).", default: "10"),
        .value("goal", "STATION_ID", help: "A user stops once it leaves a bike at this station."),
        .value("seed", "N", help: "Seed for the users' random choices (default: random, and printed)."),
        .value("move-time", "SECONDS", help: "Nominal seconds per move between stations.", default: "0.1"),
        .value("time-scale", "X", help: "Real sleep per move = move time x X; 1 is real time, 0 never sleeps.", default: timeScale),
        .value("max-moves", "N", help: "Moves after which a user gives up.", default: "1000000"),
    ] }

    /// The network the flags name: a file, a synthetic network, or the bundled Milano.
    static func network(_ arguments: ParsedArguments) async throws -> Network {
        let synthetic = ["stations", "bikes", "slots"].filter(arguments.isSet)
        if let path = try arguments.string("network") {
            if let first = synthetic.first {
                throw UsageError("--network cannot be combined with --\(first): give a network file or a synthetic network, not both")
            }
            return try await Service<City>.file(at: path).get().network
        }
        guard !synthetic.isEmpty else { return try BundledNetworks.milano }
        guard synthetic.count == 3 else {
            let missing = ["stations", "bikes", "slots"].filter { !synthetic.contains($0) }
            throw UsageError("a synthetic network needs --stations, --bikes and --slots; missing --\(missing.joined(separator: ", --"))")
        }
        return Network.synthetic(
            stations: try arguments.integer("stations", in: 1...maximumSyntheticStations) ?? 0,
            bikes: try arguments.integer("bikes", in: 0...maximumDocksPerStation) ?? 0,
            emptySlots: try arguments.integer("slots", in: 0...maximumDocksPerStation) ?? 0)
    }

    /// The users, paths, goal, seed and timing the flags ask for.
    static func simulationOptions(_ arguments: ParsedArguments) throws -> SimulationOptions {
        let seed = try arguments.integer("seed", in: 0...Int.max).map(UInt64.init) ?? UInt64.random(in: 0...UInt64(Int.max))
        return SimulationOptions(
            users: try arguments.integer("users", in: 1...SimulationOptions.maximumUsers) ?? 200,
            paths: try arguments.integer("paths", in: 1...SimulationOptions.maximumPaths) ?? 10,
            goal: try arguments.string("goal"),
            seed: seed,
            timing: MoveTiming(
                moveTime: try arguments.double("move-time", in: 0...SimulationOptions.maximumMoveTime) ?? 0.1,
                timeScale: try arguments.double("time-scale", in: 0...SimulationOptions.maximumTimeScale) ?? 1),
            maxMovesPerUser: try arguments.integer("max-moves", in: 1...Int.max) ?? 1_000_000)
    }
}
