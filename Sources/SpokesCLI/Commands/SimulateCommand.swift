import FoundationEssentials
import Glibc
import SpokesBikes

/// `spokes simulate`: the bike-share simulation in this process.
public enum SimulateCommand {
    static let workload = WorkloadOptions()
    static let workers = Option.integer("workers", "N", in: 1...SimulationOptions.maximumUsers,
                                        help: "Users simulated at once; with 1, a seed reproduces a run exactly.", defaultText: "all")
    static let json = Option.flag("json", help: "Print one JSON report on stdout instead of the summary.")
    static let progress = Option.flag("progress", help: "Show progress on stderr even when it is not a terminal (one line per update).")

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
        options: workload.all + [workers, json, progress, ReportOutput.htmlOption])

    public static let subcommand = Subcommand(spec: spec) { arguments, context in
        try await run(arguments, context: context)
    }

    /// Parses the workload, runs it, and prints the report. Returns the exit status:
    /// 0, or 130 when interrupted.
    static func run(_ arguments: ParsedArguments, context: CommandContext) async throws -> Int32 {
        _ = try ReportOutput.htmlPath(arguments)
        let network = try await workload.network(arguments)
        var options = try workload.simulationOptions(arguments)
        options.workers = try arguments.value(workers)
        let simulation = try Simulation(network: network, options: options)

        let progress = ProgressLine(
            mode: try arguments.value(progress) ? .lines : context.standardErrorIsTerminal && !(try arguments.value(json)) ? .redraw : .off,
            write: context.standardError)
        let running = Task { await simulation.run { progress.show($0) } }
        let interrupt = InterruptHandler { running.cancel() }
        progress.start(users: options.users)
        let report = await running.value
        interrupt.stop()
        progress.finish()

        let written = try ReportOutput.emit(report, arguments: arguments, context: context)
        if report.cancelled {
            context.standardError("interrupted: the report above covers the users that finished\n")
            return 130
        }
        return report.conservation.holds && written ? 0 : 1
    }
}
