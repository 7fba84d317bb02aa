import FoundationEssentials
import Glibc
import SpokesBikes
import SpokesCluster
import SpokesConcurrency
import SpokesJobs

/// `spokes bench`: the benchmark figures of issue 7 for Spokes, on local clusters of
/// `spokes node` processes. `Scripts/bench` runs it beside the same figures for Dask and
/// Ray and prints the table; `--json` prints one object per figure for that.
enum BenchCommand {
    static let spec = CommandSpec(
        name: "bench",
        abstract: "Measure start-up, memory, throughput, latency, scaling, recovery and the bike workload on local clusters.",
        discussion: """
            Starts local clusters of 'spokes node' processes (like demo) and measures: cold start \
            (launching 2 nodes to the first task's result); resident memory of an idle node; \
            bench.noop throughput, 20,000 tasks on 2 nodes x 1 slot; the round trip of one remote \
            no-op, p50 and p99 of 1,000 sequential calls; 200 bench.sleep 0.1 s tasks with 4 slots \
            per node on 1, 2 and 4 nodes against the ideal 200 x 0.1 / (4 x nodes); recovery, the \
            time from killing a worker mid-job until its tasks start again on another worker \
            (each task's start on its worker, after a warm-up round); and the bike \
            workload (Milano, 1,000 users x 20 paths at time scale 0 in one process and on 3 \
            nodes, and 5,000 users at time scale 1 against real time). Each figure is the best \
            of 3 runs (1 with --quick). A measurement that fails fails its figure (an "error" \
            in --json, FAILED in the text) and the exit status. Use a release build. With \
            SPOKES_SECRET set, every cluster runs authenticated (sealed frames). '--only capacity' \
            (minutes; never in the default run) measures the real-time capacity table of \
            BENCHMARKS.md: per size of --users, the pace of 'simulate' and of a job on 3 nodes, \
            and the coordinator's CPU per move; --nodes-binary runs the nodes of another build.
            """,
        options: [
            .flag("quick", help: "Smaller runs, once each (about 20 seconds in all)."),
            .flag("json", help: "Print one JSON object per figure on stdout (for Scripts/bench)."),
            .flag("profile", help: "After each scaling figure, show where the time went (from every worker's task timeline)."),
            .value("only", "GROUPS", help: "Measure only these, comma-separated: \(groups.joined(separator: ", ")) (capacity only when named).",
                   default: defaultGroups.joined(separator: ",")),
            OptionSpec(name: "users", valueName: "N,N,...", help: "The sizes of the capacity table (real-time users), each",
                       defaultValue: Bench.capacitySizes.map(String.init).joined(separator: ","), range: "1 to 100000"),
            .value("nodes-binary", "PATH", help: "Run the nodes of every cluster from this spokes binary (an earlier build's, to compare): the client is this one."),
        ])

    /// The groups of figures `--only` selects from, in the order they run.
    static let groups = defaultGroups + ["capacity"]

    /// The groups measured when `--only` is not given: `capacity` takes minutes.
    static let defaultGroups = ["start", "throughput", "latency", "scaling", "recovery", "bikes"]

    /// One measured figure, as `Scripts/bench` reads it. A measurement that failed has
    /// an `error` and no values: it fails its figure, and never meets a target.
    struct Figure: Encodable {
        var system = "spokes"
        var figure: String
        var values: [String: Double]
        var text: String
        /// Every run's value, where the figure is the best of them.
        var samples: [Double]?
        /// Why the measurement failed; nil when it did not.
        var error: String?

        init(figure: String, values: [String: Double], text: String, samples: [Double]? = nil) {
            self.figure = figure
            self.values = values
            self.text = text
            self.samples = samples
        }

        /// A figure whose measurement failed, and why.
        static func failed(_ figure: String, what: String, error: String) -> Figure {
            var failed = Figure(figure: figure, values: [:], text: "\(what): FAILED, \(error)")
            failed.error = error
            return failed
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: AnyKey.self)
            try container.encode(system, forKey: AnyKey("system"))
            try container.encode(figure, forKey: AnyKey("figure"))
            for (key, value) in values { try container.encode(value, forKey: AnyKey(key)) }
            if let samples { try container.encode(samples, forKey: AnyKey("samples")) }
            if let error { try container.encode(error, forKey: AnyKey("error")) }
        }
    }

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    static let subcommand = Subcommand(spec: spec) { arguments, context in
        let quick = arguments.flag("quick")
        let json = arguments.flag("json")
        if context.environment[ClusterSettings.secretVariable].map({ !$0.isEmpty }) == true {
            context.standardError("bench: clusters run with the secret from SPOKES_SECRET (sealed frames)\n")
        }
        var bench = Bench(runs: quick ? 1 : 3, quick: quick, profile: arguments.flag("profile"), context: context)
        if let sizes = try arguments.string("users") {
            bench.capacityUsers = try sizes.split(separator: ",").map { text in
                guard let users = Int(text), (1...100_000).contains(users) else {
                    throw UsageError("--users: '\(text)' is not a number of users from 1 to 100,000")
                }
                return users
            }
        }
        if let binary = try arguments.string("nodes-binary") {
            guard FileManager.default.isExecutableFile(atPath: binary) else { throw UsageError("--nodes-binary: no executable file at '\(binary)'") }
            bench.nodesBinary = binary
        }
        var figures: [Figure] = []
        func report(_ figure: Figure) {
            figures.append(figure)
            context.standardError(figure.text + "\n")
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = .sortedKeys
                context.standardOutput(String(decoding: (try? encoder.encode(figure)) ?? Data(), as: UTF8.self) + "\n")
            }
        }
        let only = (try arguments.string("only") ?? defaultGroups.joined(separator: ",")).split(separator: ",").map(String.init)
        if let unknown = only.first(where: { !groups.contains($0) }) {
            throw UsageError("--only: unknown group '\(unknown)'; the groups are \(groups.joined(separator: ", "))")
        }
        let measurements: [String: (Bench) -> (@escaping Bench.Report) async throws -> Void] = [
            "start": Bench.coldStartAndMemory, "throughput": Bench.noopThroughput, "latency": Bench.roundTrip,
            "scaling": Bench.scaling, "recovery": Bench.recovery, "bikes": Bench.bikes, "capacity": Bench.capacity,
        ]
        for group in groups where only.contains(group) {
            try await measurements[group]!(bench)(report)
        }
        if !json { context.standardOutput(figures.map(\.text).joined(separator: "\n") + "\n") }
        let failed = figures.filter { $0.error != nil }.map(\.figure)
        guard failed.isEmpty else {
            context.standardError("bench: \(failed.count) measurement\(failed.count == 1 ? "" : "s") failed: \(failed.joined(separator: ", "))\n")
            return 1
        }
        return 0
    }
}

/// The measurements; each starts its own local cluster and stops it by PID.
struct Bench {
    let runs: Int
    let quick: Bool
    var profile = false
    let context: CommandContext
    /// The sizes of the capacity table (`--users`).
    var capacityUsers = Bench.capacitySizes
    /// The binary every cluster's nodes run (`--nodes-binary`); nil: this one.
    var nodesBinary: String?

    typealias Report = (BenchCommand.Figure) -> Void

    /// A fresh local cluster's settings, with the secret of `SPOKES_SECRET` if set (the
    /// nodes inherit the variable).
    func settings() throws -> ClusterSettings {
        var settings = ClusterSettings()
        settings.cluster = "bench-\(String(UInt32.random(in: 0...UInt32.max), radix: 36))"
        settings.discoveryPort = UInt16.random(in: 40_000...49_999)
        try settings.loadSecret(environment: context.environment)
        return settings
    }

    /// Runs `body` on a fresh local cluster of `nodes` nodes, stopped after. Its nodes
    /// keep their records in a temporary folder of their own, removed after: a fresh
    /// node is what is measured. (With the default data directory, every bench and demo
    /// run's Raft groups and job store were reopened by the next run's nodes: an "idle"
    /// node read 87 MiB where a fresh one is 22, and two runs at once shared a folder.)
    func withCluster<T: Sendable>(
        nodes: Int, slots: Int, arguments: [String] = [], environment: [String: String] = [:],
        _ body: (LocalCluster, ClusterSettings) async throws -> T
    ) async throws -> T {
        let settings = try settings()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("spokes-bench-\(UUID().uuidString)").path
        let remove = { _ = await runBlocking("spokes.bench.cleanup") { try? FileManager.default.removeItem(atPath: folder) } }
        do {
            let cluster = try await LocalCluster.start(
                count: nodes, slots: slots, settings: settings, environment: environment, context: context, binary: nodesBinary,
                extraArguments: { _ in ["--data-directory", folder] + arguments })
            let result = try await cluster.whileRunning { try await body($0, settings) }
            await remove()
            return result
        } catch {
            await remove()
            throw error
        }
    }

    func runBatch(on cluster: LocalCluster, settings: ClusterSettings, kind: String, input: String, count: Int, retries: Int = 0) async throws -> TaskJobs.BatchReport {
        try await NodeClient.withClient(of: cluster.nodes[0].address, settings: settings, callTimeout: 600) { client, node in
            let desk = try TaskJobs.resolve(id: ActorID(node: node, name: TaskJobs.wellKnownName), using: client)
            let report = try await desk.runBatch(kind: kind, input: input, count: count, deadline: 60, retries: retries)
            guard report.succeeded == count else { throw BenchError.tasksFailed(report.tasks - report.succeeded) }
            return report
        }
    }

    /// 4 and 5: from launching 2 nodes to the first task's result; then the resident
    /// memory of the idle nodes.
    func coldStartAndMemory(_ report: Report) async throws {
        var best = Double.infinity
        var sizes: [(pid: Int32, bytes: Int?)] = []
        for run in 0..<runs {
            let start = RealClock().now
            try await withCluster(nodes: 2, slots: 1) { cluster, settings in
                _ = try await runBatch(on: cluster, settings: settings, kind: NoopTask.name, input: "1", count: 1)
                best = min(best, RealClock().now - start)
                if run == runs - 1 {
                    try await RealClock().sleep(for: 2)
                    sizes = cluster.nodes.map { ($0.pid, Self.residentBytes(pid: $0.pid)) }
                }
            }
        }
        report(.init(figure: "cold_start", values: ["seconds": best],
                     text: String(printf: "cold start, 2 nodes to the first result: %.3f s", best)))
        report(Self.memoryFigure(sizes))
    }

    /// The idle-memory figure from each node's resident bytes (the coordinator first); it
    /// fails when any could not be read.
    static func memoryFigure(_ sizes: [(pid: Int32, bytes: Int?)]) -> BenchCommand.Figure {
        let what = "idle node resident memory"
        guard !sizes.isEmpty else { return .failed("memory", what: what, error: "no node to measure") }
        if let unread = sizes.first(where: { $0.bytes == nil }) {
            return .failed("memory", what: what, error: "cannot read VmRSS from /proc/\(unread.pid)/status")
        }
        let bytes = sizes.compactMap(\.bytes)
        let node = bytes.min()!, coordinator = bytes[0]
        return .init(figure: "memory", values: ["worker_bytes": Double(node), "head_bytes": Double(coordinator)],
                     text: String(printf: "\(what): %.1f MiB (the coordinator %.1f MiB)", Double(node) / 1_048_576, Double(coordinator) / 1_048_576))
    }

    /// 1: 20,000 no-op tasks at once on 2 nodes x 1 slot.
    func noopThroughput(_ report: Report) async throws {
        let count = quick ? 2_000 : 20_000
        let (best, cpu) = try await withCluster(nodes: 2, slots: 1) { cluster, settings in
            _ = try await runBatch(on: cluster, settings: settings, kind: NoopTask.name, input: "1", count: 100)
            var best = 0.0
            var cpu: Double?
            for _ in 0..<runs {
                let before = cluster.nodes.map { Self.cpuSeconds(pid: $0.pid) }
                let batch = try await runBatch(on: cluster, settings: settings, kind: NoopTask.name, input: "1", count: count)
                best = max(best, Double(count) / batch.wallTime)
                let after = cluster.nodes.map { Self.cpuSeconds(pid: $0.pid) }
                if !before.contains(nil), !after.contains(nil) {
                    let used = zip(after, before).reduce(0.0) { $0 + $1.0! - $1.1! }
                    cpu = min(cpu ?? .infinity, used / Double(count))
                }
            }
            return (best, cpu)
        }
        report(.init(figure: "noop_throughput", values: ["tasks": Double(count), "tasks_per_second": best],
                     text: String(printf: "noop throughput, 2 nodes x 1 slot: %d tasks at %.0f tasks/s", count, best)))
        if let cpu {
            report(.init(figure: "noop_cpu", values: ["microseconds_per_task": cpu * 1e6],
                         text: String(printf: "cpu per no-op task, coordinator and worker together: %.0f us", cpu * 1e6)))
        } else {
            report(.failed("noop_cpu", what: "cpu per no-op task", error: "cannot read the nodes' CPU times from /proc/PID/stat"))
        }
    }

    /// User plus system CPU seconds `pid` has used (fields 14 and 15 of /proc/PID/stat,
    /// in clock ticks), or nil when unreadable.
    static func cpuSeconds(pid: Int32, proc: String = "/proc") -> Double? {
        guard let text = try? String(contentsOfFile: "\(proc)/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        // After the command name (which may hold spaces, hence the last ')'): state is field 3.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// 2: sequential no-op tasks from a client straight to one node's worker.
    func roundTrip(_ report: Report) async throws {
        let count = quick ? 200 : 1_000
        let best = try await withCluster(nodes: 1, slots: 1) { cluster, settings in
            try await NodeClient.withClient(of: cluster.nodes[0].address, settings: settings, callTimeout: 30) { client, node in
                let worker = try ScanSystem.resolve(id: ActorID(node: node, name: ScanSystem.wellKnownName), using: client)
                for index in 0..<20 { _ = try await worker.run(TaskRequest(job: "warm", task: index, attempt: 1, kind: NoopTask.name, input: "1")) }
                var best: (p50: Double, p99: Double) = (.infinity, .infinity)
                for run in 0..<runs {
                    var samples: [Double] = []
                    for index in 0..<count {
                        let start = RealClock().now
                        _ = try await worker.run(TaskRequest(job: "rtt-\(run)", task: index, attempt: 1, kind: NoopTask.name, input: "1"))
                        samples.append(RealClock().now - start)
                    }
                    samples.sort()
                    let figures = (samples[samples.count / 2], samples[min(samples.count - 1, samples.count * 99 / 100)])
                    if figures.0 < best.p50 { best = figures }
                }
                return best
            }
        }
        report(.init(figure: "round_trip", values: ["calls": Double(count), "p50": best.p50, "p99": best.p99],
                     text: String(printf: "remote round trip, %d sequential no-ops: p50 %.3f ms, p99 %.3f ms", count, best.p50 * 1_000, best.p99 * 1_000)))
    }

    /// 3: 200 x sleep 0.1 s, 4 slots per node, on 1, 2 and 4 nodes.
    func scaling(_ report: Report) async throws {
        for nodes in quick ? [1, 2] : [1, 2, 4] {
            let best = try await withCluster(nodes: nodes, slots: 4) { cluster, settings in
                var best: TaskJobs.BatchReport?
                for _ in 0..<runs {
                    let batch = try await runBatch(on: cluster, settings: settings, kind: SleepTask.name, input: "0.1", count: 200)
                    if batch.wallTime < best?.wallTime ?? .infinity { best = batch }
                }
                if profile, let best, let profiled = try await schedulingProfile(of: best, on: cluster, settings: settings, nominal: 0.1) {
                    context.standardError("profile, \(nodes) node(s): \(profiled.text)\n")
                }
                return best?.wallTime ?? .infinity
            }
            let ideal = 200 * 0.1 / Double(4 * nodes)
            report(.init(figure: "scaling", values: ["nodes": Double(nodes), "seconds": best, "efficiency": ideal / best],
                         text: String(printf: "200 x sleep 0.1 s, %d node(s) x 4 slots: %.2f s (ideal %.2f s, efficiency %.1f%%)", nodes, best, ideal, 100 * ideal / best)))
        }
    }

    /// Where `batch`'s time went, from the task timeline of every node of `cluster`.
    func schedulingProfile(of batch: TaskJobs.BatchReport, on cluster: LocalCluster, settings: ClusterSettings, nominal: Double) async throws -> SchedulingProfile? {
        let spans = try await spans(of: batch.job, on: cluster.nodes, settings: settings)
        return SchedulingProfile(spans: spans, start: batch.startedAt, wall: batch.wallTime, nominal: nominal)
    }

    /// The attempts of `job` that `nodes` ran, as each worker's task timeline recorded them
    /// (times on `CLOCK_MONOTONIC`, which every process of the machine shares).
    func spans(of job: String, on nodes: [LocalCluster.Node], settings: ClusterSettings) async throws -> [(node: String, span: TaskTimeline.Span)] {
        var spans: [(node: String, span: TaskTimeline.Span)] = []
        for member in nodes {
            let observation = try await NodeClient.withClient(of: member.address, settings: settings, callTimeout: 10) { client, node in
                try await NodeStatus.resolve(id: ActorID(node: node, name: NodeStatus.wellKnownName), using: client).observe(tasksAfter: 0)
            }
            spans += observation.tasks.filter { $0.job == job }.map { (member.name, $0) }
        }
        return spans
    }

    /// 7: 3 nodes x 4 slots run 8 tasks of 3 s, after a warm-up round (a task per slot, as
    /// the peers run); a node running some is SIGKILLed after 1 s. Recovery is the time
    /// from the kill until the last of its tasks has started again on another node: each
    /// result's attempt as its worker's timeline started it, on `CLOCK_MONOTONIC`, the
    /// same moment the peers' tasks stamp. A run that cannot measure it fails the figure
    /// unless another run measured it.
    func recovery(_ report: Report) async throws {
        var samples: [Double] = []
        var failures: [String] = []
        for _ in 0..<runs {
            let measured: Result<Double, BenchError> = try await withCluster(nodes: 3, slots: 4) { cluster, settings in
                _ = try await runBatch(on: cluster, settings: settings, kind: SleepTask.name, input: "0.3", count: 12)
                let batch = Task { try await runBatch(on: cluster, settings: settings, kind: SleepTask.name, input: "3", count: 8, retries: 3) }
                try await RealClock().sleep(for: 1)
                var victim: LocalCluster.Node?
                for node in cluster.nodes.dropFirst() {
                    let running = try await StatusCommand.fetchMembers(from: node.address, settings: settings, timeout: 2).first?.running ?? 0
                    if running > 0 { victim = node; break }
                }
                guard let victim else {
                    _ = try await batch.value
                    return .failure(.notMeasured("no node but the coordinator was running tasks 1 s into the job"))
                }
                let killed = RealClock().now
                kill(victim.pid, SIGKILL)
                let result = try await batch.value
                let survivors = cluster.nodes.filter { $0.pid != victim.pid }
                let restarts = try await spans(of: result.job, on: survivors, settings: settings)
                    .filter { $0.span.outcome == .succeeded && $0.span.start > killed }.map(\.span.start)
                guard let last = restarts.max() else { return .failure(.notMeasured("no task started again after the kill")) }
                return .success(last - killed)
            }
            switch measured {
            case .success(let seconds): samples.append(seconds)
            case .failure(let error): failures.append(error.description)
            }
        }
        let what = "recovery, a worker SIGKILLed mid-job"
        guard let best = samples.min() else {
            report(.failed("recovery", what: what, error: failures.joined(separator: "; ")))
            return
        }
        report(.init(figure: "recovery", values: ["seconds": best],
                     text: String(printf: "\(what): its tasks start again elsewhere %.3f s later", best), samples: samples))
    }

    /// 6: the bike workload on the Milano network.
    func bikes(_ report: Report) async throws {
        let network = try BundledNetworks.milano
        // In one process 1,000 users take milliseconds even with --quick: fewer would be
        // too short a run to time.
        let localOptions = SimulationOptions(users: 1_000, paths: 20, seed: 1, timing: MoveTiming(moveTime: 0.1, timeScale: 0))
        let users = quick ? 200 : 1_000
        let options = SimulationOptions(users: users, paths: 20, seed: 1, timing: MoveTiming(moveTime: 0.1, timeScale: 0))
        var local = 0.0
        for _ in 0..<runs {
            let result = await (try Simulation(network: network, options: localOptions)).run()
            local = max(local, Double(result.totalMoves) / result.wallTime)
        }
        report(.init(figure: "bikes_local", values: ["users": Double(localOptions.users), "steps_per_second": local],
                     text: String(printf: "bikes, Milano, %d users x 20 paths at time scale 0, one process: %.0f user-steps/s", localOptions.users, local)))
        let (distributed, cpu) = try await withCluster(nodes: 3, slots: 4) { cluster, settings in
            var best = 0.0
            var cpu: Double?
            for _ in 0..<runs {
                let run = try await submit(BikeJob(network: network, options: options), to: cluster, settings: settings)
                guard run.report.completedUsers == users, run.report.conservation.holds else {
                    throw BenchError.tasksFailed(users - run.report.completedUsers)
                }
                best = max(best, Double(run.report.totalMoves) / run.report.wallTime)
                if let used = run.coordinatorCPU { cpu = min(cpu ?? .infinity, used / Double(run.report.totalMoves)) }
            }
            return (best, cpu)
        }
        report(.init(figure: "bikes_cluster", values: ["users": Double(users), "steps_per_second": distributed],
                     text: String(printf: "bikes, Milano, %d users x 20 paths at time scale 0, 3 nodes: %.0f user-steps/s", users, distributed)))
        if let cpu {
            report(.init(figure: "bikes_cluster_cpu", values: ["microseconds_per_move": cpu * 1e6],
                         text: String(printf: "bikes at time scale 0 on 3 nodes: the coordinator's cpu per move, its own users' included: %.1f us", cpu * 1e6)))
        } else {
            report(.failed("bikes_cluster_cpu", what: "the coordinator's cpu per move", error: "cannot read its CPU time from /proc/PID/stat"))
        }
        let realUsers = quick ? 1_000 : 5_000
        let realTime = SimulationOptions(users: realUsers, paths: 5, seed: 1, timing: MoveTiming(moveTime: 0.2, timeScale: 1))
        let result = await (try Simulation(network: network, options: realTime)).run()
        // A user travels between moves, not after its last one: the longest user's real
        // time is its moves minus one, times the move time.
        let ideal = result.nominalDuration - realTime.timing.moveTime
        let pace = ideal / result.wallTime
        report(.init(figure: "bikes_real_time", values: ["users": Double(realUsers), "pace": pace],
                     text: String(printf: "bikes, Milano, %d users x 5 paths at time scale 1, one process: %.2f s of travel in %.2f s wall (pace %.3f)",
                                  realUsers, ideal, result.wallTime, pace)))
    }

    /// Resident bytes of process `pid`, from /proc; nil when they cannot be read (never 0,
    /// which would read as a process that takes no memory).
    static func residentBytes(pid: Int32, proc: String = "/proc") -> Int? {
        guard let text = try? String(contentsOfFile: "\(proc)/\(pid)/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) }), kilobytes > 0 else { return nil }
        return kilobytes * 1024
    }
}

enum BenchError: Error, CustomStringConvertible {
    case tasksFailed(Int)
    /// A run that could not measure its figure, and why.
    case notMeasured(String)

    var description: String {
        switch self {
        case .tasksFailed(let count): "\(count) benchmark tasks failed"
        case .notMeasured(let why): why
        }
    }
}
