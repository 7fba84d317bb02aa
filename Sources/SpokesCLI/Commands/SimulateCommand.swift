import Foundation
import SpokesBikes

/// `spokes simulate`: the bike-share simulation in this process.
public enum SimulateCommand {
    public static let spec = CommandSpec(
        name: "simulate",
        abstract: "Run the bike-share simulation in this process.",
        discussion: """
            Users walk and ride between the stations of a network, competing for bikes and \
            empty slots. Without --network or --stations the bundled Milano network (BikeMi, \
            318 stations) is used. Every report checks that no bike was lost or created.
            """,
        usage: [
            "simulate [--network FILE] [--users U] [--paths P] [options]",
            "simulate --stations N --bikes B --slots S [--users U] [--paths P] [options]",
        ],
        options: [
            .value("network", "FILE", help: "A CityBikes network JSON file (default: the bundled Milano network)."),
            .value("stations", "N", help: "Simulate N identical synthetic stations instead of a network file."),
            .value("bikes", "B", help: "Free bikes at each synthetic station."),
            .value("slots", "S", help: "Empty slots at each synthetic station."),
            .value("users", "U", help: "Users riding at the same time.", default: "200"),
            .value("paths", "P", help: "Rides per user (a ride ends when a bike is left).", default: "10"),
            .value("goal", "STATION_ID", help: "A user stops once it leaves a bike at this station."),
            .value("seed", "N", help: "Seed for the users' random choices (default: random, and printed)."),
            .value("move-time", "SECONDS", help: "Nominal seconds per move between stations.", default: "0.1"),
            .value("time-scale", "X", help: "Real sleep per move = move time x X; 1 is real time, 0 never sleeps.", default: "1"),
            .value("workers", "N", help: "Users simulated at once (default: all); with 1, a seed reproduces a run exactly."),
            .value("max-moves", "N", help: "Moves after which a user gives up.", default: "1000000"),
            .flag("json", help: "Print one JSON report on stdout instead of the summary."),
            .flag("progress", help: "Show progress on stderr even when it is not a terminal (one line per update)."),
        ])

    static let maximumSyntheticStations = 100_000
    static let maximumDocksPerStation = 10_000

    public static let subcommand = Subcommand(spec: spec) { arguments, context in
        try await run(arguments, context: context)
    }

    /// Parses the workload, runs it, and prints the report. Returns the exit status:
    /// 0, or 130 when interrupted.
    static func run(_ arguments: ParsedArguments, context: CommandContext) async throws -> Int32 {
        let network = try await loadNetwork(arguments)
        let options = try simulationOptions(arguments)
        let simulation = try Simulation(network: network, options: options)

        let progress = ProgressLine(
            mode: arguments.flag("progress") ? .lines : context.standardErrorIsTerminal && !arguments.flag("json") ? .redraw : .off,
            write: context.standardError)
        let running = Task { await simulation.run { progress.show($0) } }
        let interrupt = InterruptHandler { running.cancel() }
        progress.start(users: options.users)
        let report = await running.value
        interrupt.stop()
        progress.finish()

        if arguments.flag("json") {
            context.standardOutput(try ReportFormatter.json(report) + "\n")
        } else {
            context.standardOutput(ReportFormatter.summary(report))
        }
        if report.cancelled {
            context.standardError("interrupted: the report above covers the users that finished\n")
            return 130
        }
        return report.conservation.holds ? 0 : 1
    }

    static func loadNetwork(_ arguments: ParsedArguments) async throws -> Network {
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
            workers: try arguments.integer("workers", in: 1...SimulationOptions.maximumUsers),
            maxMovesPerUser: try arguments.integer("max-moves", in: 1...Int.max) ?? 1_000_000)
    }
}
