import FoundationEssentials
import Glibc
import SpokesCluster
import SpokesConcurrency

/// `spokes stop --to HOST:PORT`: asks one node to leave the cluster and exit, as SIGTERM
/// does. The client gets in like any other (the secret, where there is one).
enum StopCommand {
    static let timeout = Option.number("timeout", "SECONDS", in: 0.1...600, default: 5,
                                       help: "How long to wait for the node to answer and leave.")

    static let spec = CommandSpec(
        name: "stop",
        abstract: "Ask a node to leave the cluster and exit, as SIGTERM does.",
        discussion: """
            Connects to the node at --to as a client (with the cluster's secret, where there \
            is one), asks it to stop, and waits until it has said goodbye: it tells its peers \
            it leaves, so they drop it at once, and exits 0. For a node started by hand \
            elsewhere; nodes of Scripts/cluster-up stop with Scripts/cluster-down.
            """,
        usage: ["stop --to HOST:PORT [options]"],
        options: [NodeClient.to, timeout] + ClusterOptions.connectionOptions)

    static let subcommand = Subcommand(spec: spec) { arguments, context in
        guard let address = try arguments.value(NodeClient.to) else {
            throw UsageError("which node? give --to HOST:PORT (see 'spokes status')")
        }
        let settings = try ClusterOptions.settings(arguments, environment: context.environment)
        let timeout = try arguments.value(timeout)
        let client = try NodeClient.makeClient(settings: settings, callTimeout: timeout)
        defer { client.shutdown() }
        let events = client.peerEventStream()
        let peer = try await NodeClient.join(address, with: client)
        let status = try NodeStatus.resolve(id: ActorID(node: peer.node, name: NodeStatus.wellKnownName), using: client)
        do {
            _ = try await status.stop()
        } catch RemoteCallError.peerDisconnected {
            // It went before its answer did: stopping is what was asked.
        }
        // Goodbye: its `leave`, or the connection closing as it exits.
        let left = try? await withTimeout(seconds: timeout) { () async -> Bool in
            for await event in events {
                switch event {
                case .left(let node) where node == peer.node: return true
                case .disconnected(let node, _) where node == peer.node: return true
                default: continue
                }
            }
            return false
        }
        guard left == true else {
            context.standardError("error: \(peer.node.name) at \(address) was asked to stop but did not leave within \(timeout.compactDescription) s\n")
            return 1
        }
        context.standardOutput("\(peer.node.name) at \(address) left the cluster and is stopping\n")
        return 0
    }
}
