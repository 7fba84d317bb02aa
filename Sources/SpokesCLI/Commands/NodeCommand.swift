import Foundation
import SpokesCluster

/// `spokes node`: runs a node in the foreground until SIGINT or SIGTERM.
enum NodeCommand {
    static let spec = CommandSpec(
        name: "node",
        abstract: "Run a cluster node in the foreground.",
        discussion: """
            Listens for peers and tasks, finds other nodes by discovery and --seed, and \
            prints one line to stdout once it listens: 'ready name=<name> address=<host>:<port>'. \
            Logs go to stderr. SIGINT or SIGTERM announces leave to the peers and exits 0.
            """,
        options: ClusterOptions.node + ClusterOptions.connection)

    static let subcommand = Subcommand(spec: spec) { arguments, context in
        try await run(ClusterOptions.settings(arguments), context: context)
    }

    static func run(_ settings: ClusterSettings, context: CommandContext) async throws -> Int32 {
        if let address = try? SocketAddress(parsing: "\(settings.host):0"), !address.isLoopback {
            context.standardError("warning: listening on \(settings.host), beyond this machine; anyone who can reach it can join (a cluster secret comes with the security work)\n")
        }
        let node = try ClusterNode(settings: settings)
        let stopped = Promise<Void, Never>()
        let signals = InterruptHandler(signals: [SIGINT, SIGTERM]) { stopped.resolve(()) }
        defer { signals.stop() }
        let events = node.membershipEvents()
        node.start()
        let name = node.system.node.name
        context.standardOutput("ready name=\(name) address=\(node.system.address)\n")
        context.standardError("[\(name)] listening on \(node.system.address), cluster '\(settings.cluster)', \(settings.slots) slots, discovery \(settings.discoveryMode.rawValue)\n")
        let logging = Task {
            for await event in events {
                context.standardError("[\(name)] \(describe(event))\n")
            }
        }
        await stopped.future.value
        context.standardError("[\(name)] stopping: telling peers we leave\n")
        await node.stop()
        logging.cancel()
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

import SpokesConcurrency
