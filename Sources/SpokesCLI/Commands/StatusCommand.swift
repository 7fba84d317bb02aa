import Foundation
import SpokesCluster
import SpokesConcurrency

/// `spokes status`: asks a node for its member list.
enum StatusCommand {
    static let spec = CommandSpec(
        name: "status",
        abstract: "Show the members of a cluster, as a node sees them.",
        discussion: """
            Asks the node at --to, or without it the first node of the cluster heard by \
            discovery on this machine, for its members: itself first, then every node it knows.
            """,
        options: [
            .value("to", "HOST:PORT", help: "The node to ask (default: find one by discovery)."),
            .value("timeout", "SECONDS", help: "How long to look for a node and wait for its answer.", default: "3"),
            .flag("json", help: "Print {\"members\": [...]} as JSON."),
        ] + ClusterOptions.connection)

    static let subcommand = Subcommand(spec: spec) { arguments, context in
        let settings = try ClusterOptions.settings(arguments)
        let timeout = try arguments.double("timeout", in: 0.1...600) ?? 3
        let target: SocketAddress
        if let to = try arguments.string("to") {
            do { target = try SocketAddress(parsing: to) } catch { throw UsageError("--to \(to): \(error)") }
        } else {
            target = try await NodeFinder.firstNode(settings: settings, timeout: timeout)
        }
        let members = try await fetchMembers(from: target, settings: settings, timeout: timeout)
        if arguments.flag("json") {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            context.standardOutput(String(decoding: try encoder.encode(["members": members]), as: UTF8.self) + "\n")
        } else {
            context.standardOutput(table(members))
        }
        return 0
    }

    static func fetchMembers(from address: SocketAddress, settings: ClusterSettings, timeout: Double) async throws -> [MemberStatus] {
        var clientSettings = settings
        clientSettings.host = "127.0.0.1"
        clientSettings.port = 0
        clientSettings.callTimeout = timeout
        clientSettings.handshakeTimeout = timeout
        let client = try ClusterSystem(settings: clientSettings, isMember: false)
        defer { client.shutdown() }
        let peer = try await client.join(address)
        let status = try NodeStatus.resolve(id: ActorID(node: peer.node, name: NodeStatus.wellKnownName), using: client)
        return try await status.members()
    }

    static func table(_ members: [MemberStatus]) -> String {
        let header = ["NAME", "ADDRESS", "STATE", "SLOTS", "RUNNING", "COMPLETED", "UPTIME"]
        let rows = members.map { member in
            [member.name, member.address, member.state, "\(member.slots)",
             member.running.map(String.init) ?? "-", member.completed.map(String.init) ?? "-",
             member.uptime.map { String(format: "%.0fs", $0) } ?? "-"]
        }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        return ([header] + rows).map { row in
            row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell.padding(toLength: widths[column] + 2, withPad: " ", startingAt: 0)
            }.joined()
        }.joined(separator: "\n") + "\n"
    }
}
