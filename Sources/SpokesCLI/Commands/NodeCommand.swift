import FoundationEssentials
import Glibc
import SpokesCluster
import SpokesConcurrency
import SpokesConsensus
import SpokesDashboard
import SpokesNode

/// `spokes node`: runs a node in the foreground until SIGINT, SIGTERM or `spokes stop`.
enum NodeCommand {
    static let failEvery = Option.integer("fail-every", "N", in: 0...1_000_000, default: 0,
                                          help: "Fault injection: every Nth task on this node fails; 0: none.")
    static let slow = Option.integer("slow", "MS", in: 0...3_600_000, default: 0,
                                     help: "Fault injection: each task on this node waits MS milliseconds first.")
    static let stopWithParent = Option.flag("stop-with-parent",
                                            help: "Stop (saying goodbye) when the process that started this node is gone; demo and bench use it.")

    static let spec = CommandSpec(
        name: "node",
        abstract: "Run a cluster node in the foreground.",
        discussion: """
            Listens for peers and tasks, finds other nodes by discovery and --peer, and \
            prints one line to stdout once it listens: 'ready name=<name> address=<host>:<port>' \
            (and 'dashboard=<url>' when it serves the web dashboard, see --dashboard). \
            Logs go to stderr, one line each: an ISO-8601 UTC time, a level, the node's name \
            and the message (--log-format json: one JSON object a line). SIGINT, SIGTERM or 'spokes stop --to HOST:PORT' announces leave \
            to the peers and exits 0.
            """,
        options: ClusterOptions.nodeOptions + [LogFormat.option, failEvery, slow, stopWithParent] + ClusterOptions.connectionOptions)
        .retiring("seed", "on node this is now --peer HOST:PORT (a node to connect to); --seed is only the random seed of submit, demo and simulate. Use --peer HOST:PORT")

    /// `node` for a tool whose nodes also run `kinds` (``SpokesTool/main(kinds:)``).
    static func subcommand(kinds: [any TaskKind]) -> Subcommand {
        Subcommand(spec: spec) { arguments, context in
            let logFormat = try arguments.value(LogFormat.option) ?? .text
            let faults = ScanSystem.Faults(failEvery: try arguments.value(failEvery), slowMilliseconds: try arguments.value(slow))
            return try await run(ClusterOptions.settings(arguments, environment: context.environment), kinds: kinds, faults: faults,
                                 stopWithParent: try arguments.value(stopWithParent), logFormat: logFormat, context: context)
        }
    }

    static func run(
        _ settings: ClusterSettings, kinds: [any TaskKind] = [], faults: ScanSystem.Faults = .init(), stopWithParent: Bool = false,
        logFormat: LogFormat = .text, context: CommandContext
    ) async throws -> Int32 {
        var settings = settings
        settings.dataDirectory = HomeDirectory.expand(settings.dataDirectory, environment: context.environment)
        let registry = SpokesTool.registry(kinds: kinds)
        let (keyringFile, keyringNote) = try await loadSavedKeyring(into: &settings)
        let node = try ClusterNode(settings: settings, registry: registry, faults: faults, logger: logFormat.logger(context.standardError))
        let log = node.system
        if let keyringFile { node.system.keyring?.keep(in: keyringFile) }
        if let keyringNote { log.log(keyringNote) }
        if settings.secret == nil, settings.allowInsecure, let address = try? SocketAddress(parsing: "\(settings.host):0"), !address.isLoopback {
            log.log("listening on \(settings.host) without a cluster secret: anyone who can reach it can join and run tasks (see SECURITY.md)", level: .warning)
        }
        let stopped = Promise<Void, Never>()
        let signals = InterruptHandler(signals: [SIGINT, SIGTERM]) { stopped.resolve(()) }
        defer { signals.stop() }
        node.onStopRequest { stopped.resolve(()) }
        // A node a demo or a benchmark started must not outlive it, even when it was
        // killed: once the parent is gone the node is adopted, and its parent changes.
        let runtime = node.system.runtime
        let orphanWatch: Task<Void, Never>? = !stopWithParent ? nil : Task {
            let parent = getppid()
            while !Task.isCancelled, getppid() == parent {
                try? await runtime.sleep(for: 0.5)
            }
            if !Task.isCancelled {
                log.log("the process that started this node is gone")
                stopped.resolve(())
            }
        }
        defer { orphanWatch?.cancel() }
        let events = node.membershipEvents()
        // A live member already has this name: stop, and exit 1 with the conflict below.
        node.nameConflict.whenComplete { _ in stopped.resolve(()) }
        // The node's own files (its Raft groups, its journal) are under `nodes/NAME/`, so
        // nodes that share a data directory never share them.
        let own = NodeDirectory.path(of: node.system.node.name, in: HomeDirectory.expand(settings.dataDirectory))
        // One process per node's files: a second node of this name on this data directory
        // would vote twice in the same Raft groups.
        // A folder that cannot be made is no other node's: this node still works for others
        // and refuses jobs, naming the path, as it did before (issue 19 §2).
        var claim: DirectoryLock?
        do {
            claim = try DirectoryLock(directory: own)
        } catch where error.problem == nil {
            await node.stop()
            throw NodeDirectoryInUse(node: node.system.node.name, failure: error)
        } catch {
            log.log("cannot claim this node's folder: \(error); it keeps no job of its own", level: .warning)
        }
        defer { withExtendedLifetime(claim) {} }
        let assembly = await NodeAssembly.start(node: node, folder: own)
        let name = node.system.node.name
        var dashboard: Dashboard?
        if settings.dashboardPort != nil {
            do {
                dashboard = try Dashboard(node: node, build: SpokesVersion.metricsBuild)
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
        log.log("listening on \(node.system.address), cluster '\(settings.cluster)', \(security), \(settings.slots) cpu slots, \(settings.waitingSlots) waiting slots, discovery \(settings.discoveryMode.rawValue), job records in \(settings.dataDirectory)\(faultNote)")
        if let dashboard { log.log("dashboard at \(dashboard.url)") }
        log.log("runs task kinds \(registry.schemas.map(\.description).joined(separator: ", "))")
        let logging = Task {
            for await event in events {
                log.log(describe(event))
            }
        }
        await stopped.future.value
        if node.nameTaken == nil { log.log("stopping: telling peers we leave") }
        dashboard?.stop()
        await assembly.stop()
        logging.cancel()
        if let conflict = node.nameTaken { throw conflict }
        return 0
    }

    /// A named node keeps what `spokes keyring` makes of its keyring in its own folder
    /// (``KeyringFile``) and starts from it, instead of `secret_file` and
    /// `accept_secret_files`, which may still name a secret the cluster has removed.
    /// Returns the file (nil for an unnamed node, whose folder is new each start) and a
    /// line for the log when the saved keyring is used or ignored.
    static func loadSavedKeyring(into settings: inout ClusterSettings) async throws -> (KeyringFile?, String?) {
        guard !settings.nodeName.isEmpty else { return (nil, nil) }
        let file = KeyringFile(directory: NodeDirectory.path(of: settings.nodeName, in: settings.dataDirectory))
        guard let configured = settings.secret else {
            // An open node has no keyring: a saved one is only worth a word.
            guard case .some(.some) = try? await runBlocking("keyring-load", { try file.load() }) else { return (file, nil) }
            return (file, "ignores its saved keyring \(file.path): this node runs without a secret (delete the file if the cluster is open now)")
        }
        guard let saved = try await runBlocking("keyring-load", { try file.load() }) else { return (file, nil) }
        settings.secret = saved.primary
        settings.acceptedSecrets = Array(saved.secrets.dropFirst())
        let stale = saved.secrets.contains(configured) ? "" : "; the configured secret \(configured.fingerprint) is not in it (update secret_file to the primary's file)"
        return (file, "keyring from \(file.path), saved by 'spokes keyring': primary \(saved.primary.fingerprint), installed \(saved.fingerprints.joined(separator: ", ")); it replaces secret_file and accept_secret_files\(stale)")
    }

    static func describe(_ event: MembershipEvent) -> String {
        switch event {
        case .joined(let member): "member \(member.node) at \(member.address) is \(member.state.rawValue)"
        case .changed(let member, let from): "member \(member.node) \(from.rawValue) -> \(member.state.rawValue)"
        case .removed(let member): "member \(member.node) removed"
        }
    }
}

/// Another process runs a node of this name on this data directory.
struct NodeDirectoryInUse: Error, CustomStringConvertible {
    var node: String
    var failure: DirectoryLock.Failure

    var description: String {
        "node \(node): its files in \(failure.directory) are in use by another process\(failure.holder.map { " (pid \($0))" } ?? ""); "
            + "two nodes with one name and data directory would vote twice in their Raft groups: stop that one, or give this one another --name or --data-directory"
    }
}
