import Foundation
import SpokesBikes
import SpokesCluster
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
            try await JobService.resolve(id: ActorID(node: node, name: JobService.wellKnownName), using: client).clusterJobs()
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
                        "\(job.cancelled)", "\(job.retries)", String(format: "%.1fs", job.wallTime), job.finished ?? "-",
                        job.coordinator, job.slots.map { $0.share.owner.isEmpty ? "-" : $0.share.owner } ?? "-",
                        job.slots.map { "\($0.share.priority)" } ?? "-", job.slots.map(slotsColumn) ?? "-",
                        job.kind ?? BikeUserTask.name, job.title]
            })
    }

    /// `cpu 3 of 4.0`: the places a running job holds of its budget, of its fair share;
    /// `(max 2)` when capped.
    static func slotsColumn(_ slots: JobSlots) -> String {
        "\(slots.cost) \(slots.inUse)" + (slots.fairShare.map { String(format: " of %.1f", $0) } ?? "")
            + (slots.share.maxSlots.map { " (max \($0))" } ?? "")
    }
}

enum ResultCommand {
    /// Seconds a job must stay listed as stalled before `result` says so and stops.
    static let stalledPatience = 3.0

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
        let runtime = client.runtime
        var found = try await stored(job, at: target, with: client)
        // Just after a restart a replicated job is known only once its replicas have
        // elected a leader (about a second): --wait gives it that long.
        let patience = runtime.now + 5
        while case .unknown = found, arguments.flag("wait"), runtime.now < patience {
            try await runtime.sleep(for: 0.25)
            found = try await stored(job, at: target, with: client)
        }
        var waited = false
        var hops = 0
        var stalledSince: Double?
        while case .elsewhere(let location) = found {
            // A stalled job waits for a majority of its replicas, which no client can bring
            // back: once it stays stalled for a while (a node cut off from the rest sees
            // its peers dead while they run the job on), say so, naming them, and stop
            // (issue 29 §2).
            if location.summary.state == .stalled {
                let since = stalledSince ?? runtime.now
                stalledSince = since
                if runtime.now - since >= Self.stalledPatience {
                    context.standardError("job \(job) is stalled on \(location.node): \(location.summary.stalledReason ?? "too few of its replicas can take part")\n")
                    return 1
                }
                try await runtime.sleep(for: 0.25)
                found = try await stored(job, at: target, with: client)
                continue
            }
            stalledSince = nil
            // A finished job is a hop or two away; only waiting on a running one loops on.
            if location.summary.state != .running { hops += 1 }
            guard hops <= 3 else { break }
            if location.summary.state == .running {
                guard arguments.flag("wait") else {
                    let summary = location.summary
                    context.standardError("job \(job) is running on \(location.node) at \(location.address) (\(summary.succeeded) of \(summary.tasks) done); "
                        + "'spokes result \(job) --wait' waits for its report\n")
                    return 1
                }
                if !waited, context.standardErrorIsTerminal { context.standardError("waiting for job \(job) on \(location.node)...\n") }
                waited = true
                try await runtime.sleep(for: 0.25)
            }
            let address = try SocketAddress(parsing: location.address)
            var next = try await stored(job, at: address, with: client)
            // Listed as finished but no report on its node: it may have ended between the
            // two questions (ask again), or the store could not keep it.
            var asked = 1
            while case .elsewhere(let moved) = next, moved.node == location.node, moved.summary.state != .running {
                guard asked < 3 else {
                    context.standardError("error: job \(job) ended on \(location.node) but its report is not in that node's job store\n")
                    return 1
                }
                asked += 1
                try await runtime.sleep(for: 0.25)
                next = try await stored(job, at: address, with: client)
            }
            found = next
        }
        switch found {
        case .bikes(let report):
            return try ReportOutput.emit(report, arguments: arguments, context: context) ? 0 : 1
        case .tasks(let report):
            return try emit(report, arguments: arguments, context: context)
        case .unknown, .elsewhere:
            context.standardError("error: no node of the cluster knows job \(job) (asked the node at \(target) and its members); 'spokes jobs' lists the cluster's jobs\n")
            return 1
        }
    }

    /// What a node knows of a job: its stored report (a bike job's or a job of tasks'),
    /// where in the cluster it is, or nothing.
    enum Found: Sendable {
        case bikes(SimulationReport)
        case tasks(TaskJobReport)
        case elsewhere(JobService.JobLocation)
        case unknown
    }

    /// Asks the node at `address` for `job`'s stored report, else where the job is. The
    /// client dials a node once and asks it again over the same connection.
    static func stored(_ job: String, at address: SocketAddress, with client: ClusterSystem) async throws -> Found {
        let node: NodeID
        if let connected = client.connectedPeers.first(where: { $0.address == address.description }) {
            node = connected.node
        } else {
            node = try await NodeClient.join(address, with: client).node
        }
        let bikes = try BikeJobService.resolve(id: ActorID(node: node, name: BikeJobService.wellKnownName), using: client)
        let service = try JobService.resolve(id: ActorID(node: node, name: JobService.wellKnownName), using: client)
        if let report = try await bikes.report(of: job) { return .bikes(report) }
        let desk = try TaskJobs.resolve(id: ActorID(node: node, name: TaskJobs.wellKnownName), using: client)
        if let report = try await desk.report(of: job) { return .tasks(report) }
        return try await service.locate(job: job).map { .elsewhere($0) } ?? .unknown
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
