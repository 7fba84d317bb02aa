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
            discovery on this machine, for its members: itself first, then every node it knows; \
            and where that node serves its dashboard, with the token when you hold the secret.
            """,
        options: [
            NodeClient.toOption,
            .value("timeout", "SECONDS", help: "How long to look for a node and wait for its answer.", default: "3"),
            .flag("json", help: "Print {\"members\": [...], \"rejected\": {...}} as JSON: the members, and what the node turned away by kind."),
        ] + ClusterOptions.connection)

    static let subcommand = Subcommand(spec: spec) { arguments, context in
        let settings = try ClusterOptions.settings(arguments, environment: context.environment)
        let timeout = try arguments.double("timeout", in: 0.1...600) ?? 3
        let target = try await NodeClient.target(arguments, settings: settings, timeout: timeout)
        let report = try await fetchReport(from: target, settings: settings, timeout: timeout)
        if arguments.flag("json") {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            context.standardOutput(String(decoding: try encoder.encode(report), as: UTF8.self) + "\n")
        } else {
            context.standardOutput(table(report.members))
            if let me = report.members.first, let dashboard = me.dashboard {
                let token = settings.secret.map { "?token=\($0.dashboardToken)" } ?? ""
                context.standardOutput("dashboard of \(me.name): \(dashboard)\(token)\n")
            }
            let rejected = report.rejected.values.reduce(0, +)
            if rejected > 0 { context.standardOutput("rejected: \(rejected) inputs turned away (--json shows them by kind)\n") }
        }
        return 0
    }

    /// What `status --json` prints.
    struct Report: Codable {
        var members: [MemberStatus]
        var rejected: [String: Int]
    }

    static func fetchReport(from address: SocketAddress, settings: ClusterSettings, timeout: Double) async throws -> Report {
        try await NodeClient.withClient(of: address, settings: settings, callTimeout: timeout) { client, node in
            let status = try NodeStatus.resolve(id: ActorID(node: node, name: NodeStatus.wellKnownName), using: client)
            return Report(members: try await status.members(), rejected: try await status.rejected())
        }
    }

    static func fetchMembers(from address: SocketAddress, settings: ClusterSettings, timeout: Double) async throws -> [MemberStatus] {
        try await NodeClient.withClient(of: address, settings: settings, callTimeout: timeout) { client, node in
            try await NodeStatus.resolve(id: ActorID(node: node, name: NodeStatus.wellKnownName), using: client).members()
        }
    }

    static func table(_ members: [MemberStatus]) -> String {
        NodeClient.table(
            ["NAME", "ADDRESS", "STATE", "SLOTS", "RUNNING", "COMPLETED", "UPTIME"],
            members.map { member in
                [member.name, member.address, member.state, "\(member.slots)",
                 member.running.map(String.init) ?? "-", member.completed.map(String.init) ?? "-",
                 member.uptime.map { String(format: "%.0fs", $0) } ?? "-"]
            })
    }
}
