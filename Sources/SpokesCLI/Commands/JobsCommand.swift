import FoundationEssentials
import Glibc
import SpokesBikes
import SpokesCluster
import SpokesConcurrency
import SpokesJobs

/// `spokes jobs` and `spokes result JOB`: the cluster's jobs, running and stored, asked of
/// any node.
enum JobsCommand {
    static let spec = CommandSpec(
        name: "jobs",
        abstract: "List the cluster's jobs: those running now on any node, with their progress, then those the nodes stored.",
        discussion: """
            Asks the node at --to (or the first found by discovery), which asks every alive \
            member: one list for the cluster, with the node that coordinates or stored each \
            job. A member that does not answer within 2 s is left out and named on stderr. \
            A running job of tasks shows its owner, priority, and SLOTS: the places of its \
            budget it holds now (running or queued on a worker) of its fair share of the \
            cluster's slots (shared between owners first, then each owner's jobs by \
            priority; README, "Sharing the cluster").
            """,
        options: [NodeClient.toOption, .flag("json", help: "Print the list as JSON.")] + ClusterOptions.connection)

    static let subcommand = Subcommand(spec: spec) { arguments, context in
        let settings = try ClusterOptions.settings(arguments, environment: context.environment)
        let target = try await NodeClient.target(arguments, settings: settings, timeout: 3)
        let listed = try await NodeClient.withClient(of: target, settings: settings, callTimeout: 10) { client, node in
            try await JobDeskClient(system: client).list(at: node)
        }
        let jobs = listed.jobs
        if !listed.unanswered.isEmpty {
            context.standardError("not listed: the jobs of \(listed.unanswered.joined(separator: ", ")), which did not answer within 2 s\n")
        }
        if arguments.flag("json") {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            context.standardOutput(String(decoding: try encoder.encode(listed), as: UTF8.self) + "\n")
        } else if jobs.isEmpty {
            context.standardOutput("no jobs\n")
        } else {
            context.standardOutput(table(jobs))
            // A stalled job's row says so; why is too long for a column.
            for job in jobs where job.state == .stalled {
                context.standardOutput("\(job.job) is stalled: \(job.stalledReason ?? "too few of its replicas can take part")\n")
            }
        }
        return 0
    }

    /// One row per job: its state, users (or tasks) completed of all (the progress of a
    /// running one), failed and cancelled ones, retries, wall time, where it ran, its task
    /// kind, and what it is (a bike job's network, a job of tasks' title); for a running
    /// job of tasks, its owner, priority, the places it holds now of its budget and its
    /// fair share of the cluster's slots of that budget (`cpu 3 of 4.0`).
    static func table(_ jobs: [JobStore.Summary]) -> String {
        NodeClient.table(
            ["JOB", "STATE", "COMPLETED", "FAILED", "CANCELLED", "RETRIES", "WALL", "FINISHED", "COORDINATOR", "OWNER", "PRIORITY", "SLOTS", "KIND", "WHAT"],
            jobs.map { job in
                let percent = job.tasks > 0 ? job.succeeded * 100 / job.tasks : 100
                return [job.job, job.state.rawValue, "\(job.succeeded)/\(job.tasks) (\(percent)%)", "\(job.failed)",
                        "\(job.cancelled)", "\(job.retries)", String(printf: "%.1fs", job.wallTime), job.finished ?? "-",
                        job.coordinator, job.slots.map { $0.share.owner.isEmpty ? "-" : $0.share.owner } ?? "-",
                        job.slots.map { "\($0.share.priority)" } ?? "-", job.slots.map(slotsColumn) ?? "-",
                        job.kind ?? BikeUserTask.name, job.title]
            })
    }

    /// `cpu 3 of 4.0`: the places a running job holds of its budget, of its fair share;
    /// `(max 2)` when capped.
    static func slotsColumn(_ slots: JobSlots) -> String {
        "\(slots.cost) \(slots.inUse)" + (slots.fairShare.map { String(printf: " of %.1f", $0) } ?? "")
            + (slots.share.maxSlots.map { " (max \($0))" } ?? "")
    }
}

enum ResultCommand {
    static let spec = CommandSpec(
        name: "result",
        abstract: "Print a finished job's report again, from whichever node stored it.",
        discussion: """
            Asks the node at --to (or the first found by discovery); when another member \
            coordinates or stored the job, the report comes from there. A job still running \
            is named with its node and progress; with --wait this waits for its end and \
            prints its report. Exit status 0 when the job completed, 1 otherwise.
            """,
        usage: ["result JOB [--to HOST:PORT | --data-directory DIR] [--wait] [--json] [--html FILE]"],
        options: [
            .value("job", "JOB", help: "The job id, as 'spokes jobs' lists it (also accepted as the first argument)."),
            NodeClient.toOption, .flag("wait", help: "Wait for a running job to end, then print its report."),
            .flag("json", help: "Print the report as JSON."), ReportOutput.htmlOption, ResultFromFolder.option.spec,
        ] + ClusterOptions.connection,
        positional: "job")

    static let subcommand = Subcommand(spec: spec) { arguments, context in
        guard let job = try arguments.string("job") else {
            throw UsageError("which job? give --job JOB (see 'spokes jobs')")
        }
        if let status = try ResultFromFolder.emit(job: job, arguments: arguments, context: context) { return status }
        let settings = try ClusterOptions.settings(arguments, environment: context.environment)
        _ = try ReportOutput.htmlPath(arguments)
        let target = try await NodeClient.target(arguments, settings: settings, timeout: 3)
        // One client for every question, however long --wait waits.
        let client = try NodeClient.makeClient(settings: settings, callTimeout: 10)
        defer { client.shutdown() }
        // --wait's bound is the job's own end (its tasks have deadlines and bounded retries).
        let found = try await JobDeskClient(system: client).result(
            of: job, at: target, waiting: arguments.flag("wait") ? .untilEnd(atMost: nil) : .no,
            join: { try await NodeClient.join($0, with: client).node }, storedReport: StoredJobReport.find,
            onWaiting: { location in
                if context.standardErrorIsTerminal { context.standardError("waiting for job \(job) on \(location.node)...\n") }
            })
        switch found {
        case .report(.bikes(let report)):
            return try ReportOutput.emit(report, arguments: arguments, context: context) ? 0 : 1
        case .report(.tasks(let report)):
            return try emit(report, arguments: arguments, context: context)
        case .running(let location), .stillRunning(let location, _):
            let summary = location.summary
            context.standardError("job \(job) is running on \(location.node) at \(location.address) (\(summary.succeeded) of \(summary.tasks) done); "
                + "'spokes result \(job) --wait' waits for its report\n")
            return 1
        case .stalled(let node, let reason):
            context.standardError("job \(job) is stalled on \(node): \(reason)\n")
            return 1
        case .notStored(let node):
            context.standardError("error: job \(job) ended on \(node) but its report is not in that node's job store\n")
            return 1
        case .unknown:
            context.standardError("error: no node of the cluster knows job \(job) (asked the node at \(target) and its members); 'spokes jobs' lists the cluster's jobs\n")
            return 1
        }
    }

    /// Prints a stored job of tasks: a sweep's report, or a map's outputs; the exit status.
    static func emit(_ job: TaskJobReport, arguments: ParsedArguments, context: CommandContext) throws -> Int32 {
        if job.kind == SweepRunTask.name { return try SweepCommand.emit(job, arguments: arguments, context: context) }
        if try ReportOutput.htmlPath(arguments) != nil {
            throw UsageError("job \(job.job) is a job of \(job.kind) tasks: --html is for bike jobs and sweeps")
        }
        return RunCommand.emitStored(job, json: arguments.flag("json"), context: context)
    }
}
