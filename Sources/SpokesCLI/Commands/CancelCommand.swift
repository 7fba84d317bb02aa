import FoundationEssentials
import SpokesBikes
import SpokesCluster
import SpokesJobs

/// `spokes cancel JOB`: stops a running job, from any client.
enum CancelCommand {
    static let spec = CommandSpec(
        name: "cancel",
        abstract: "Cancel a running job on every node; its report so far is stored.",
        discussion: """
            Asks the node at --to (or the first found by discovery); a node that does not \
            coordinate the job passes the request to the member that does. The coordinator \
            stops scheduling, cancels the job's attempts on every worker, checks that no bike \
            was lost, and stores the report, which says the job was cancelled. Waits up to 10 s \
            for the job to end. Exit status 1 when no node runs the job.
            """,
        usage: ["cancel JOB [--to HOST:PORT]"],
        options: [
            .value("job", "JOB", help: "The job id, as 'spokes submit' printed it or 'spokes jobs' lists it (also accepted as the first argument)."),
            NodeClient.toOption,
        ] + ClusterOptions.connection,
        positional: "job")

    static let subcommand = Subcommand(spec: spec) { arguments, context in
        guard let job = try arguments.string("job") else {
            throw UsageError("which job? give JOB (see 'spokes jobs')")
        }
        let settings = try ClusterOptions.settings(arguments, environment: context.environment)
        let target = try await NodeClient.target(arguments, settings: settings, timeout: 3)
        let cancellation = try await NodeClient.withClient(of: target, settings: settings, callTimeout: 30) { client, node in
            try await JobDeskClient(system: client).cancel(job, at: node, origin: .command)
        }
        guard let cancellation else {
            context.standardError("error: no node of the cluster runs job \(job) (asked the node at \(target) and its members); 'spokes jobs' lists the jobs a node runs and stored\n")
            return 1
        }
        let coordinator = "\(cancellation.coordinator) at \(cancellation.coordinatorAddress)"
        guard let summary = cancellation.summary else {
            context.standardOutput("job \(job) on \(coordinator) is stopping (it had not ended within 10 s); 'spokes jobs --to \(cancellation.coordinatorAddress)' shows when it has\n")
            return 0
        }
        context.standardOutput(Self.ended(job, on: coordinator, summary) + "\n")
        if let error = cancellation.storeError {
            context.standardError("warning: the coordinator could not store its report: \(error)\n")
            return 1
        }
        context.standardOutput("its report is stored: spokes result \(job) --to \(cancellation.coordinatorAddress)\n")
        return 0
    }

    /// What the command says of a job that ended as `summary` says, on `coordinator`: one
    /// the cancel stopped, or one that had ended before the cancel reached it (its last
    /// task had ended, and its report was being stored).
    static func ended(_ job: String, on coordinator: String, _ summary: JobStore.Summary) -> String {
        let unit = summary.kind == nil ? "users" : "tasks"
        let what = summary.state == .cancelled
            ? "cancelled job \(job) on \(coordinator)"
            : "job \(job) on \(coordinator) had ended (\(summary.state.rawValue)) before the cancel reached it"
        return "\(what): \(summary.succeeded) of \(summary.tasks) \(unit) completed, \(summary.cancelled) cancelled, \(summary.failed) failed"
    }
}
