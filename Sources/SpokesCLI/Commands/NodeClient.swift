import Foundation
import SpokesCluster

/// How client commands (`status`, `submit`, `jobs`, `result`) reach a node: the
/// address from `--to`, or the first node heard by discovery; then a client
/// `ClusterSystem` that is not a member.
enum NodeClient {
    static let toOption = OptionSpec.value("to", "HOST:PORT", help: "The node to ask (default: find one by discovery).")

    /// The node address `--to` names, or the first node of the cluster heard within `timeout`.
    static func target(_ arguments: ParsedArguments, settings: ClusterSettings, timeout: Double) async throws -> SocketAddress {
        guard let to = try arguments.string("to") else {
            return try await NodeFinder.firstNode(settings: settings, timeout: timeout)
        }
        do {
            return try SocketAddress(parsing: to)
        } catch {
            throw UsageError("--to \(to): \(error)")
        }
    }

    /// Runs `body` with a client system joined to the node at `address`.
    static func withClient<T: Sendable>(
        of address: SocketAddress, settings: ClusterSettings, callTimeout: Double,
        _ body: (ClusterSystem, NodeID) async throws -> T
    ) async throws -> T {
        var clientSettings = settings
        clientSettings.host = "127.0.0.1"
        clientSettings.port = 0
        clientSettings.callTimeout = callTimeout
        clientSettings.handshakeTimeout = min(settings.handshakeTimeout, callTimeout)
        let client = try ClusterSystem(settings: clientSettings, isMember: false)
        defer { client.shutdown() }
        let peer = try await client.join(address)
        return try await body(client, peer.node)
    }

    /// An aligned text table.
    static func table(_ header: [String], _ rows: [[String]]) -> String {
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        return ([header] + rows).map { row in
            row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell.padding(toLength: widths[column] + 2, withPad: " ", startingAt: 0)
            }.joined()
        }.joined(separator: "\n") + "\n"
    }
}
