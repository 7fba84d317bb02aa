import Foundation
import SpokesBikes
import SpokesCluster

/// `spokes jobs` and `spokes result JOB`: a node's jobs, running and stored.
enum JobsCommand {
    static let spec = CommandSpec(
        name: "jobs",
        abstract: "List a node's jobs: those it runs now, with their progress, then those it stored (its data directory).",
        options: [NodeClient.toOption, .flag("json", help: "Print the list as JSON.")] + ClusterOptions.connection)

    static let subcommand = Subcommand(spec: spec) { arguments, context in
        let settings = try ClusterOptions.settings(arguments, environment: context.environment)
        let target = try await NodeClient.target(arguments, settings: settings, timeout: 3)
        let jobs = try await NodeClient.withClient(of: target, settings: settings, callTimeout: 10) { client, node in
            try await JobService.resolve(id: ActorID(node: node, name: JobService.wellKnownName), using: client).jobs()
        }
        if arguments.flag("json") {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            context.standardOutput(String(decoding: try encoder.encode(["jobs": jobs]), as: UTF8.self) + "\n")
        } else if jobs.isEmpty {
            context.standardOutput("no jobs\n")
        } else {
            context.standardOutput(table(jobs))
        }
        return 0
    }

    /// One row per job: its state, users (or tasks) completed of all (the progress of a
    /// running one), failed and cancelled ones, retries, wall time, where it ran, its task
    /// kind, and what it is (a bike job's network, a job of tasks' title).
    static func table(_ jobs: [JobStore.Summary]) -> String {
        NodeClient.table(
            ["JOB", "STATE", "COMPLETED", "FAILED", "CANCELLED", "RETRIES", "WALL", "FINISHED", "COORDINATOR", "KIND", "WHAT"],
            jobs.map { job in
                let percent = job.users > 0 ? job.completedUsers * 100 / job.users : 100
                return [job.job, job.state.rawValue, "\(job.completedUsers)/\(job.users) (\(percent)%)", "\(job.failedUsers)",
                        "\(job.cancelledUsers)", "\(job.retries)", String(format: "%.1fs", job.wallTime), job.finished ?? "-",
                        job.coordinator, job.kind ?? BikeUserTask.name, job.network]
            })
    }
}

enum ResultCommand {
    static let spec = CommandSpec(
        name: "result",
        abstract: "Print a finished job's report again.",
        usage: ["result JOB [--to HOST:PORT | --data-directory DIR] [--json] [--html FILE]"],
        options: [
            .value("job", "JOB", help: "The job id, as 'spokes jobs' lists it (also accepted as the first argument)."),
            NodeClient.toOption, .flag("json", help: "Print the report as JSON."), ReportOutput.htmlOption, ResultFromFolder.option.spec,
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
        let found: (bikes: SimulationReport?, tasks: TaskJobReport?) = try await NodeClient.withClient(of: target, settings: settings, callTimeout: 10) { client, node in
            let service = try JobService.resolve(id: ActorID(node: node, name: JobService.wellKnownName), using: client)
            if let report = try await service.report(of: job) { return (report, nil) }
            let desk = try TaskJobs.resolve(id: ActorID(node: node, name: TaskJobs.wellKnownName), using: client)
            return (nil, try await desk.report(of: job))
        }
        let (report, taskJob) = found
        if let report { return try ReportOutput.emit(report, arguments: arguments, context: context) ? 0 : 1 }
        if let taskJob { return try emit(taskJob, arguments: arguments, context: context) }
        context.standardError("error: job \(job) is not in the job store of the node at \(target); 'spokes jobs --to \(target)' lists what is\n")
        return 1
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
