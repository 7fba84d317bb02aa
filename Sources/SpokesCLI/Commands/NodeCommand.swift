import Foundation
import SpokesBikes
import SpokesCluster
import SpokesConcurrency
import SpokesDashboard

/// `spokes node`: runs a node in the foreground until SIGINT or SIGTERM.
enum NodeCommand {
    static let spec = CommandSpec(
        name: "node",
        abstract: "Run a cluster node in the foreground.",
        discussion: """
            Listens for peers and tasks, finds other nodes by discovery and --seed, and \
            prints one line to stdout once it listens: 'ready name=<name> address=<host>:<port>' \
            (and 'dashboard=<url>' when it serves the web dashboard, see --dashboard). \
            Logs go to stderr. SIGINT or SIGTERM announces leave to the peers and exits 0.
            """,
        options: ClusterOptions.node + [
            .value("fail-every", "N", help: "Fault injection: every Nth task on this node fails.", default: "0"),
            .value("slow", "MS", help: "Fault injection: each task on this node waits MS milliseconds first.", default: "0"),
            .flag("stop-with-parent", help: "Stop (saying goodbye) when the process that started this node is gone; demo and bench use it."),
        ] + ClusterOptions.connection)

    static let subcommand = Subcommand(spec: spec) { arguments, context in
        let faults = ScanSystem.Faults(
            failEvery: try arguments.integer("fail-every", in: 0...1_000_000) ?? 0,
            slowMilliseconds: try arguments.integer("slow", in: 0...3_600_000) ?? 0)
        return try await run(ClusterOptions.settings(arguments, environment: context.environment), faults: faults,
                             stopWithParent: arguments.flag("stop-with-parent"), context: context)
    }

    static func run(_ settings: ClusterSettings, faults: ScanSystem.Faults = .init(), stopWithParent: Bool = false, context: CommandContext) async throws -> Int32 {
        if settings.secret == nil, settings.allowInsecure, let address = try? SocketAddress(parsing: "\(settings.host):0"), !address.isLoopback {
            context.standardError("warning: listening on \(settings.host) without a cluster secret: anyone who can reach it can join and run tasks (see SECURITY.md)\n")
        }
        let registry = TaskRegistry()
        registry.register(BikeUserTask())
        let node = try ClusterNode(settings: settings, registry: registry, faults: faults)
        let stopped = Promise<Void, Never>()
        let signals = InterruptHandler(signals: [SIGINT, SIGTERM]) { stopped.resolve(()) }
        defer { signals.stop() }
        // A node a demo or a benchmark started must not outlive it, even when it was
        // killed: once the parent is gone the node is adopted, and its parent changes.
        let orphanWatch: Task<Void, Never>? = !stopWithParent ? nil : Task {
            let parent = getppid()
            while !Task.isCancelled, getppid() == parent {
                try? await Task.sleep(for: .milliseconds(500))
            }
            if !Task.isCancelled {
                context.standardError("[\(node.system.node.name)] the process that started this node is gone\n")
                stopped.resolve(())
            }
        }
        defer { orphanWatch?.cancel() }
        let events = node.membershipEvents()
        // A live member already has this name: stop, and exit 1 with the conflict below.
        node.nameConflict.whenComplete { _ in stopped.resolve(()) }
        node.start()
        let jobs = ClusterSystem.withWellKnownName(JobService.wellKnownName) { JobService(actorSystem: node.system, node: node) }
        let name = node.system.node.name
        var dashboard: Dashboard?
        if settings.dashboardPort != nil {
            do {
                dashboard = try Dashboard(node: node)
            } catch {
                await node.stop()
                throw error
            }
            dashboard?.start()
            node.dashboard = dashboard.map { "http://\($0.server.address)/" }
        }
        context.standardOutput("ready name=\(name) address=\(node.system.address)\(dashboard.map { " dashboard=\($0.url)" } ?? "")\n")
        var faultNote = ""
        if faults.failEvery > 0 { faultNote += ", failing every \(faults.failEvery)th task" }
        if faults.slowMilliseconds > 0 { faultNote += ", \(faults.slowMilliseconds) ms slow" }
        let security = settings.secret.map { "secret \($0.fingerprint)" } ?? "no secret"
        context.standardError("[\(name)] listening on \(node.system.address), cluster '\(settings.cluster)', \(security), \(settings.slots) slots, discovery \(settings.discoveryMode.rawValue)\(faultNote)\n")
        if let dashboard { context.standardError("[\(name)] dashboard at \(dashboard.url)\n") }
        let logging = Task {
            for await event in events {
                context.standardError("[\(name)] \(describe(event))\n")
            }
        }
        await stopped.future.value
        if node.nameTaken == nil { context.standardError("[\(name)] stopping: telling peers we leave\n") }
        dashboard?.stop()
        await node.stop()
        logging.cancel()
        withExtendedLifetime(jobs) {}
        if let conflict = node.nameTaken { throw conflict }
        return 0
    }

    static func describe(_ event: MembershipEvent) -> String {
        switch event {
        case .joined(let member): "member \(member.node) at \(member.address) is \(member.state.rawValue)"
        case .changed(let member, let from): "member \(member.node) \(from.rawValue) -> \(member.state.rawValue)"
        case .removed(let member): "member \(member.node) removed"
        }
    }
}

