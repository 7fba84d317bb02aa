import FoundationEssentials
import Glibc
import SpokesBikes
import SpokesCluster
import SpokesJobs
import Synchronization

/// `spokes submit`: runs a bike simulation on a cluster.
enum SubmitCommand {
    static let spec = CommandSpec(
        name: "submit",
        abstract: "Run a bike simulation on a cluster: its users spread over every node with free slots.",
        discussion: """
            The node at --to (or the first found by discovery) coordinates the job: it hosts \
            the stations and sends one task per user to the first node with a free slot. \
            Failed tasks are retried on another node (the coordinator first); every user is counted once and the \
            report checks that no bike was lost. The job's id is printed on stderr as soon as the \
            node accepts it: 'spokes cancel JOB' stops it from anywhere, and the job runs on if this \
            client goes away ('spokes result JOB' prints its report later). Exit status 0 when every \
            user completed and the coordinator stored the report.
            """,
        usage: ["submit [--to HOST:PORT] [--network FILE | --stations N --bikes B --slots S] [--users U] [--paths P] [options]"],
        options: WorkloadOptions.specs + [
            .value("to", "HOST:PORT", help: "The node to coordinate the job (default: find one by discovery)."),
            JobOptions.deadline.spec, JobOptions.retries.spec, JobOptions.owner.spec, JobOptions.priority.spec, JobOptions.maxSlots.spec,
            .flag("json", help: "Print one JSON report on stdout instead of the summary."),
            .flag("progress", help: "Show progress on stderr even when it is not a terminal (one line per update)."),
            ReportOutput.htmlOption,
        ] + ClusterOptions.connection)

    static let subcommand = Subcommand(spec: spec) { arguments, context in
        let settings = try ClusterOptions.settings(arguments, environment: context.environment)
        _ = try ReportOutput.htmlPath(arguments)
        var job = BikeJob(
            network: try await WorkloadOptions.network(arguments),
            options: try WorkloadOptions.simulationOptions(arguments),
            deadline: try arguments.value(JobOptions.deadline),
            retries: try arguments.value(JobOptions.retries))
        job.share = try JobOptions.share(arguments, environment: context.environment)
        try job.options.validate(for: job.network)
        let target = try await NodeClient.target(arguments, settings: settings, timeout: 3)
        return try await run(job, at: target, settings: settings, arguments: arguments, context: context)
    }

    /// Submits, shows progress, prints the report; the exit status.
    static func run(_ job: BikeJob, at target: SocketAddress, settings: ClusterSettings, arguments: ParsedArguments, context: CommandContext) async throws -> Int32 {
        let progress = ProgressLine(
            mode: arguments.flag("progress") ? .lines : context.standardErrorIsTerminal && !arguments.flag("json") ? .redraw : .off,
            write: context.standardError)
        let accepted = Mutex(false)
        let report: SimulationReport
        do {
            report = try await JobClient.submit(job, to: target, settings: settings, onAccepted: { coordinator in
                accepted.withLock { $0 = true }
                context.standardError("job \(job.id) accepted by \(coordinator) at \(target); stop it with: spokes cancel \(job.id) --to \(target)\n")
            }, onReattaching: { lost in
                progress.finish()
                context.standardError(lost.lookingForTakeOver + "\n")
            }) { progress.show($0) }
        } catch RemoteCallError.peerDisconnected(let node, let reason) where accepted.withLock({ $0 }) {
            // The coordinator went silent or away after it took the job (issue 21 §1): say
            // which, since when, and how to find the job's end later.
            progress.finish()
            throw CoordinatorLost(job: job.id, node: node, address: "\(target)", reason: reason)
        }
        progress.finish()
        let written = try ReportOutput.emit(report, arguments: arguments, context: context)
        if report.cancelled { return 130 }
        return report.completedUsers == report.users && report.conservation.holds && written ? 0 : 1
    }
}
