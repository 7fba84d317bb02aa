import FoundationEssentials
import Glibc
import SpokesBikes
import SpokesCluster
import SpokesConcurrency

/// `spokes demo`: a whole cluster on this machine, one job on it, and everything stopped.
enum DemoCommand {
    static let workload = WorkloadOptions(users: 300, timeScale: 0.25)
    static let nodes = Option.integer("nodes", "N", in: 1...16, default: 3, help: "Nodes to start.")
    static let nodeSlots = Option.integer("node-slots", "S", in: 1...1_000, help: "Cpu slots per node (the bike users run in waiting slots unless --time-scale is 0).",
                                          defaultText: "cores")
    static let json = Option.flag("json", help: "Print one JSON report on stdout instead of the summary.")
    static let progress = Option.flag("progress", help: "Show progress on stderr even when it is not a terminal (one line per update).")
    static let dashboard = Option.flag("dashboard", help: "Serve the web dashboard on the first node and keep the cluster up after the job, until Ctrl-C.")
    static let dashboardPort = Option.integer("dashboard-port", "PORT", in: 0...65_535, default: 8787,
                                              help: "The dashboard's port; 0 picks a free one, and a busy one falls back to a free one.")
    static let dataDirectory = Option.string("data-directory", "DIR", help: "Where the demo's nodes keep their job records.",
                                             defaultText: "the data directory's demo folder, ~/.spokes/demo")

    static let spec = CommandSpec(
        name: "demo",
        abstract: "Start a local cluster, run the Milano simulation on it, show the split per node, stop the cluster.",
        discussion: """
            Starts --nodes 'spokes node' processes on loopback (a cluster name and discovery \
            port of their own, so a cluster you run is not disturbed), waits until they see \
            each other, submits the job to the second node, prints the report, and stops the \
            nodes it started. Their job records go to a folder of their own (--data-directory), \
            where 'spokes result JOB --data-directory DIR' finds them after the demo. With \
            --dashboard the first node serves the web dashboard: the demo prints its address, \
            runs the users in real time (unless --time-scale is given) so there is time to \
            watch, and after the job keeps the cluster up until Ctrl-C.
            """,
        options: workload.all + [nodes, nodeSlots, JobOptions.deadline, JobOptions.retries, json, progress, ReportOutput.htmlOption,
                                 dashboard, dashboardPort, dataDirectory])

    static let subcommand = Subcommand(spec: spec) { arguments, context in
        _ = try ReportOutput.htmlPath(arguments)
        let count = try arguments.value(nodes)
        let slots = try arguments.value(nodeSlots)
        var options = try workload.simulationOptions(arguments)
        let watch = try arguments.value(dashboard)
        if watch, !arguments.isSet(workload.timeScale) {
            // Slow enough to watch: the users ride in real time (about a minute).
            options.timing.timeScale = 1
        }
        let job = BikeJob(
            network: try await workload.network(arguments),
            options: options,
            deadline: try arguments.value(JobOptions.deadline),
            retries: try arguments.value(JobOptions.retries))
        try job.options.validate(for: job.network)
        let records = HomeDirectory.expand(
            try arguments.value(dataDirectory) ?? defaultDataDirectory(environment: context.environment), environment: context.environment)

        var settings = ClusterSettings()
        settings.cluster = "demo-\(String(UInt32.random(in: 0...UInt32.max), radix: 36))"
        settings.discoveryPort = UInt16.random(in: 40_000...49_999)
        // A fresh secret for every demo: its nodes and this client authenticate like a real cluster's.
        let secretText = ClusterSecret.generateText()
        settings.secret = try ClusterSecret(secretText, source: "the demo")
        var port = try arguments.value(dashboardPort)
        if watch, port != 0, !SocketAddress(host: "127.0.0.1", port: UInt16(port)).isFreeToListen {
            context.standardError("demo: port \(port) is taken; the dashboard gets a free port instead\n")
            port = 0
        }
        let cluster = try await LocalCluster.start(
            count: count, slots: slots, settings: settings, environment: [ClusterSettings.secretVariable: secretText], context: context,
            extraArguments: { index in ["--data-directory", records] + (watch && index == 0 ? ["--dashboard", "\(port)"] : []) })
        return try await cluster.whileRunning { cluster in
            context.standardError("demo: \(count) nodes of cluster '\(settings.cluster)' are up: \(cluster.nodes.map { "\($0.name) at \($0.address)" }.joined(separator: ", "))\n")
            if let dashboard = cluster.nodes.first?.dashboard {
                context.standardError("demo: watch it at \(dashboard)\n")
            }
            let coordinator = cluster.nodes[min(1, cluster.nodes.count - 1)]
            context.standardError("demo: submitting \(job.options.users) users x \(job.options.paths) paths on \(job.network.name) to \(coordinator.name)\n")
            let status = try await SubmitCommand.run(job, at: coordinator.address, settings: settings, arguments: arguments, context: context)
            context.standardError("demo: job records are in \(records); after the demo, 'spokes result \(job.id) --data-directory \(records)' prints this report again\n")
            if watch, status != 130, let dashboard = cluster.nodes.first?.dashboard {
                context.standardError("demo: the job is done; the cluster and its dashboard (\(dashboard)) stay up until you press Ctrl-C\n")
                let interrupted = Promise<Void, Never>()
                let handler = InterruptHandler(signals: [SIGINT, SIGTERM]) { interrupted.resolve(()) }
                await interrupted.future.value
                handler.stop()
                context.standardError("demo: stopping the cluster\n")
            }
            return status
        }
    }

    /// The `demo` folder of the data directory `SPOKES_DATA_DIRECTORY` names, or of the
    /// default one: the demo's records never mix with a real node's.
    static func defaultDataDirectory(environment: [String: String]) -> String {
        let base = environment[ClusterSettings.setting("data_directory")?.environmentVariable ?? ""].flatMap { $0.isEmpty ? nil : $0 }
            ?? ClusterSettings().dataDirectory
        return DiskPath.join(base, "demo")
    }
}

/// `spokes node` child processes on loopback, stopped by their PIDs.
final class LocalCluster: Sendable {
    struct Node: Sendable {
        let name: String
        let address: SocketAddress
        let pid: Int32
        /// The address of its dashboard (with its token), when it serves one.
        var dashboard: String?
    }

    let nodes: [Node]

    private init(nodes: [Node]) {
        self.nodes = nodes
    }

    /// Starts `count` nodes, with `environment` added to ours, and returns once each sees
    /// all the others alive (at most 20 s). The nodes run this binary, or `binary` (an
    /// earlier release's, to measure it).
    static func start(
        count: Int, slots: Int?, settings: ClusterSettings, environment: [String: String] = [:], context: CommandContext,
        binary: String? = nil, extraArguments: (Int) -> [String] = { _ in [] }
    ) async throws -> LocalCluster {
        let executable = binary ?? URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        var started: [Node] = []
        do {
            for index in 1...count {
                let name = "demo-\(index)"
                let arguments = ["node", "--name", name] + (slots.map { ["--slots", "\($0)"] } ?? []) + ["--stop-with-parent", "--cluster", settings.cluster,
                                 "--discovery-port", "\(settings.discoveryPort)"] + extraArguments(index - 1)
                let out = try Subprocess.pipe()
                let pid: pid_t
                do {
                    pid = try Subprocess.start(executable: executable, arguments: arguments,
                                               environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
                                               standardOutput: out.write, standardError: nil)
                } catch {
                    close(out.read)
                    close(out.write)
                    throw error
                }
                close(out.write)
                started.append(Node(name: name, address: SocketAddress(host: "127.0.0.1", port: 0), pid: pid))
                let (address, dashboard) = try await readyLine(out.read, pid: pid, timeout: 20)
                started[started.count - 1] = Node(name: name, address: address, pid: pid, dashboard: dashboard)
            }
            let cluster = LocalCluster(nodes: started)
            try await cluster.waitUntilConverged(settings: settings, timeout: 20)
            return cluster
        } catch {
            await LocalCluster(nodes: started).stop()
            throw error
        }
    }

    /// Reads a node's first stdout line, `ready name=... address=... [dashboard=...]`, off
    /// the cooperative pool, from `output` (the read end of its stdout, closed after).
    private static func readyLine(_ output: Int32, pid: Int32, timeout: Double) async throws -> (SocketAddress, String?) {
        let line = Promise<String, Never>()
        startBlocking("spokes.demo.ready") {
            var text = ""
            while !text.contains("\n") {
                let chunk = DescriptorReading.chunk(of: output)
                if chunk.isEmpty { break }
                text += String(decoding: chunk, as: UTF8.self)
            }
            close(output)
            line.resolve(text)
        }
        let text: String
        do {
            text = try await withTimeout(seconds: timeout) { await line.future.value }
        } catch {
            throw DemoError.nodeDidNotStart(pid: pid, detail: "no ready line within \(timeout) s")
        }
        let fields = text.split(whereSeparator: \.isWhitespace)
        guard let field = fields.first(where: { $0.hasPrefix("address=") }) else {
            throw DemoError.nodeDidNotStart(pid: pid, detail: text.isEmpty ? "it exited" : "it printed '\(text)'")
        }
        let dashboard = fields.first { $0.hasPrefix("dashboard=") }.map { String($0.dropFirst("dashboard=".count)) }
        return (try SocketAddress(parsing: String(field.dropFirst("address=".count))), dashboard)
    }

    private func waitUntilConverged(settings: ClusterSettings, timeout: Double) async throws {
        let clock = RealClock()
        let start = clock.now
        while clock.now - start < timeout {
            let members = (try? await StatusCommand.fetchMembers(from: nodes[0].address, settings: settings, timeout: 2)) ?? []
            if members.count == nodes.count, members.allSatisfy({ $0.state == "alive" }) { return }
            try await clock.sleep(for: 0.05)
        }
        throw DemoError.didNotConverge(nodes: nodes.count, seconds: timeout)
    }

    /// SIGTERM to every node (they announce leave), then SIGKILL to any still running
    /// after 5 s; returns once every node has exited.
    func stop() async {
        for node in nodes { kill(node.pid, SIGTERM) }
        let clock = RealClock()
        let deadline = clock.now + 5
        for node in nodes {
            var status: Int32 = 0
            while waitpid(node.pid, &status, WNOHANG) == 0 {
                if clock.now > deadline {
                    kill(node.pid, SIGKILL)
                    _ = await runBlocking("spokes.demo.reap") { () -> Int32 in
                        var status: Int32 = 0
                        return waitpid(node.pid, &status, 0)
                    }
                    break
                }
                try? await clock.sleep(for: 0.01)
            }
        }
    }

    /// Runs `body` with the cluster, then stops it, whether `body` returns or throws.
    func whileRunning<T: Sendable>(_ body: (LocalCluster) async throws -> T) async throws -> T {
        do {
            let result = try await body(self)
            await stop()
            return result
        } catch {
            await stop()
            throw error
        }
    }
}

enum DemoError: Error, CustomStringConvertible {
    case nodeDidNotStart(pid: Int32, detail: String)
    case didNotConverge(nodes: Int, seconds: Double)

    var description: String {
        switch self {
        case .nodeDidNotStart(let pid, let detail): "a demo node (pid \(pid)) did not start: \(detail)"
        case .didNotConverge(let nodes, let seconds): "the \(nodes) demo nodes did not see each other within \(seconds) s"
        }
    }
}
