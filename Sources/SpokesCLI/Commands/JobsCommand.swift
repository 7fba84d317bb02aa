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

    /// One row per job: its state, users completed of all (the progress of a running
    /// one), failed and cancelled users, retries, wall time, and where it ran.
    static func table(_ jobs: [JobStore.Summary]) -> String {
        NodeClient.table(
            ["JOB", "STATE", "COMPLETED", "FAILED", "CANCELLED", "RETRIES", "WALL", "FINISHED", "COORDINATOR", "NETWORK"],
            jobs.map { job in
                let percent = job.users > 0 ? job.completedUsers * 100 / job.users : 100
                return [job.job, job.state.rawValue, "\(job.completedUsers)/\(job.users) (\(percent)%)", "\(job.failedUsers)",
                        "\(job.cancelledUsers)", "\(job.retries)", String(format: "%.1fs", job.wallTime), job.finished ?? "-",
                        job.coordinator, job.network]
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
        let report = try await NodeClient.withClient(of: target, settings: settings, callTimeout: 10) { client, node in
            try await JobService.resolve(id: ActorID(node: node, name: JobService.wellKnownName), using: client).report(of: job)
        }
        guard let report else {
            context.standardError("error: job \(job) is not in the job store of the node at \(target); 'spokes jobs --to \(target)' lists what is\n")
            return 1
        }
        return try ReportOutput.emit(report, arguments: arguments, context: context) ? 0 : 1
    }
}
