import FoundationEssentials
import Glibc
import SpokesBikes
import SpokesCluster
import SpokesConcurrency
import SpokesDashboard
import SpokesJobs
import Synchronization

/// `spokes sweep`: many whole simulations as tasks of a cluster (issue 17 §2). Every
/// combination of the listed values is one run, a `bikes.sweep-run` cpu task placed on a
/// member with a free slot; the report groups the runs by their parameters.
enum SweepCommand {
    static let workload = WorkloadOptions()
    /// One list option per ``SweepParameter``, under its flag.
    static let lists: [(parameter: SweepParameter, option: Option<String?>)] = SweepParameter.allCases.map { parameter in
        let example = switch parameter {
        case .users: "100,200,400"
        case .paths: "10"
        case .goal: "STATION_ID,..."
        case .moveTime: "0.1"
        case .timeScale: "0"
        case .seed: "1-32"
        }
        let defaultText = parameter.defaultList ?? (parameter == .goal ? "no goal" : "required")
        let range = parameter.integerRange.map { "each " + describe($0) } ?? parameter.numberRange.map { "each " + describe($0) }
        return (parameter, Option.list(parameter.flag, example, range: range, help: "The \(parameter.name) of the runs, a list (a,b,c; a-b for whole numbers).",
                                       defaultText: defaultText))
    }
    static let json = Option.flag("json", help: "Print the report as JSON (runs and groups) on stdout instead of the summary.")
    static let results = Option.flag("results", help: "Keep every user's results in each run (in --json); large.")

    static let spec = CommandSpec(
        name: "sweep",
        abstract: "Run many simulations (every combination of the listed values) as tasks of a cluster and summarise them.",
        discussion: """
            Each run is one whole simulation, exactly what 'spokes simulate --workers 1' gives \
            for the same network, parameters and seed, wherever it runs: a cpu task placed on \
            a member with a free slot (--to, or the first node found by discovery, names the \
            cluster), retried on another member when it fails (--retries, each attempt within \
            --deadline). The report groups runs by their parameters: for each group the number \
            of runs and the mean, p50, p95 and 95% confidence interval of the waiting time per \
            user, paths ridden, failed takes and failed leaves, and which node ran each run. \
            The node coordinates and stores the sweep as a job: 'spokes jobs' lists it, 'spokes \
            result JOB' prints its report again, 'spokes cancel JOB' stops it, and it runs on if \
            this client goes away. Exit status 0 when every run succeeded and conserved its \
            bikes, 1 otherwise, 130 on Ctrl-C (which cancels the sweep).
            """,
        usage: [
            "sweep --seeds 1-32 [--users 100,200,400] [--paths 10] [--network FILE] [--to HOST:PORT] [options]",
            "sweep --stations N --bikes B --slots S --seeds 1-8 [options]",
        ],
        options: [workload.network, workload.stations, workload.bikes, workload.slots] + lists.map(\.option)
            + [workload.maxMoves, results, NodeClient.to, JobOptions.deadline, JobOptions.retries] + JobOptions.sharing + [json, ReportOutput.htmlOption]
            + ClusterOptions.connectionOptions)

    static let subcommand = Subcommand(spec: spec) { arguments, context in
        try await run(arguments, context: context)
    }

    /// The plan the flags describe; a bad list is a usage error naming its flag.
    static func plan(_ arguments: ParsedArguments) async throws -> SweepPlan {
        let network = try await workload.network(arguments)
        let source: SweepNetwork
        if try arguments.value(workload.network) != nil {
            source = .inline(network: network)
        } else if let stations = try arguments.value(workload.stations) {
            source = .synthetic(stations: stations, bikes: try arguments.value(workload.bikes) ?? 0, emptySlots: try arguments.value(workload.slots) ?? 0)
        } else {
            source = .bundled(name: .milano)
        }
        var given: [SweepParameter: String] = [:]
        for (parameter, option) in lists { given[parameter] = try arguments.value(option) }
        do {
            return try SweepPlan(network: source, lists: given, maxMoves: try arguments.value(workload.maxMoves), includeResults: try arguments.value(results))
        } catch {
            throw UsageError("\(error)")
        }
    }

    static func run(_ arguments: ParsedArguments, context: CommandContext) async throws -> Int32 {
        _ = try ReportOutput.htmlPath(arguments)
        let plan = try await plan(arguments)
        let settings = try ClusterOptions.settings(arguments, environment: context.environment)
        let deadline = try arguments.value(JobOptions.deadline) ?? settings.taskDeadline
        let retries = try arguments.value(JobOptions.retries) ?? settings.taskRetries
        let share = try JobOptions.share(arguments, environment: context.environment)
        let target = try await NodeClient.target(arguments, settings: settings, timeout: 3)
        let asJSON = try arguments.value(json)

        let client = try NodeClient.makeClient(settings: settings, callTimeout: JobClient.jobCallTimeout)
        defer { client.shutdown() }
        let first = try await NodeClient.join(target, with: client)
        let cluster = ClusterClient(system: client, entry: first.node, registry: SpokesTool.registry(), callTimeout: settings.callTimeout)
        let progress = SweepProgressLine(total: plan.runCount, enabled: context.standardErrorIsTerminal && !asJSON, write: context.standardError)
        let clock = RealClock()
        let start = clock.now
        let running = Task {
            try await SweepClient.run(
                plan, with: cluster, deadline: deadline, retries: retries, share: share,
                progress: { progress.show($0, elapsed: (clock.now - start)) },
                onStart: { plan in
                    context.standardError("job \(plan.job) accepted by \(plan.coordinator) at \(target); stop it with: spokes cancel \(plan.job) --to \(target)\n")
                },
                onReattaching: { lost in
                    context.standardError(lost.lookingForTakeOver + "\n")
                })
        }
        let interrupt = InterruptHandler(signals: [SIGINT, SIGTERM]) { running.cancel() }
        let job = try await running.value
        interrupt.stop()
        progress.finish()
        return try emit(job, arguments: arguments, context: context)
    }

    /// The sweep report of a stored job of `bikes.sweep-run` tasks (``SweepClient/report(of:)``);
    /// a job without runs is a usage error.
    static func report(of job: TaskJobReport) throws -> SweepReport {
        do {
            return try SweepClient.report(of: job)
        } catch let noRuns as SweepClient.NoRuns {
            throw UsageError("\(noRuns)")
        }
    }

    /// Prints a sweep job's report (the summary, or `--json`; `--html FILE` too); the exit
    /// status: 0 when every run succeeded and conserved its bikes, 130 when cancelled.
    static func emit(_ job: TaskJobReport, arguments: ParsedArguments, context: CommandContext) throws -> Int32 {
        let html = try ReportOutput.htmlPath(arguments)
        let report = try report(of: job)
        context.standardOutput((arguments.flag("json") ? try SweepReportFormatter.json(report) : SweepReportFormatter.summary(report)) + "\n")
        var written = true
        if let html {
            do {
                try Data(SweepReportPage.html(report, generatedAt: Date(timeIntervalSince1970: RealClock().unixNow)).utf8).write(to: URL(fileURLWithPath: html), options: .atomic)
                context.standardError("report written to \(html)\n")
            } catch {
                context.standardError("error: cannot write the HTML report to \(html): \(DiskError.reason(of: error))\n")
                written = false
            }
        }
        if let storeError = job.storeError { context.standardError("warning: the coordinator could not store job \(job.job): \(storeError)\n") }
        if job.cancelled { return 130 }
        return report.failedRuns == 0 && report.runsNotConserved == 0 && written ? 0 : 1
    }
}

/// The progress of a sweep or a map on stderr (a terminal): tasks done, rate, ETA and
/// tasks per node.
final class SweepProgressLine: Sendable {
    private let total: Int
    /// What a task is called: `runs`, `tasks`.
    private let unit: String
    private let enabled: Bool
    private let write: @Sendable (String) -> Void
    private let lastDrawn = Mutex(-1.0)

    init(total: Int, unit: String = "runs", enabled: Bool, write: @escaping @Sendable (String) -> Void) {
        self.total = total
        self.unit = unit
        self.enabled = enabled
        self.write = write
    }

    /// Redraws at most ten times a second, and always for the last run.
    func show(_ progress: ClusterClient.Progress, elapsed: Double) {
        guard enabled else { return }
        let ended = progress.done + progress.failed
        let due = lastDrawn.withLock { last in
            guard elapsed - last >= 0.1 || ended == total else { return false }
            last = elapsed
            return true
        }
        guard due else { return }
        write("\r\u{1B}[K" + Self.text(progress, total: total, elapsed: elapsed, unit: unit))
    }

    func finish() {
        if enabled { write("\n") }
    }

    /// `runs 40/96, 12.5/s, ETA 4.5 s, failed 1 (n1 20, n2 20)`.
    static func text(_ progress: ClusterClient.Progress, total: Int, elapsed: Double, unit: String = "runs") -> String {
        let ended = progress.done + progress.failed
        let rate = elapsed > 0 ? Double(ended) / elapsed : 0
        let eta = rate > 0 ? String(printf: ", ETA %.1f s", Double(total - ended) / rate) : ""
        let failed = progress.failed > 0 ? ", failed \(progress.failed)" : ""
        let nodes = progress.perNode.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        return "\(unit) \(ended)/\(total), " + String(printf: "%.1f/s", rate) + eta + failed + (nodes.isEmpty ? "" : " (\(nodes))")
    }
}
