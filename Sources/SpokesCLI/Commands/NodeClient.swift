import FoundationEssentials
import SpokesCluster
import SpokesConcurrency

/// How client commands (`status`, `submit`, `jobs`, `result`, `cancel`, `stop`) reach a
/// node: the address from `--to`, or the first node heard by discovery; then a client
/// `ClusterSystem` that is not a member. When `--to` names a node and no cluster is
/// given, the client joins that node's cluster (``ClusterOptions/settings(_:environment:)``
/// sets `joinsAnyCluster`); the secret still decides who gets in.
enum NodeClient {
    static let to = Option.parsed("to", "HOST:PORT", help: "The node to ask (default: the first found by discovery).") { text throws(UsageError) in
        do {
            return try SocketAddress(parsing: text)
        } catch {
            throw UsageError("--to \(text): \(error)")
        }
    }

    /// The same option as a spec, for commands that list string-named specs.
    static var toOption: OptionSpec { to.spec }

    /// The node address `--to` names, or the first node of the cluster heard within `timeout`.
    static func target(_ arguments: ParsedArguments, settings: ClusterSettings, timeout: Double) async throws -> SocketAddress {
        if let address = try arguments.value(to) { return address }
        return try await NodeFinder.firstNode(settings: settings, timeout: timeout)
    }

    /// Why a client could not get in; each names the node it asked.
    enum Failure: Error, CustomStringConvertible {
        /// The node could not open our handshake, or its proof did not check out with our
        /// secret: it holds another one.
        case otherSecret(address: SocketAddress)
        /// The node refused the handshake, saying why.
        case refused(address: SocketAddress, reason: String)

        var description: String {
            switch self {
            case .otherSecret(let address):
                "the node at \(address) holds another cluster secret than this client: give this client the cluster's secret (SPOKES_SECRET or secret_file)"
            case .refused(let address, let reason):
                "the node at \(address) refused this client: \(reason)"
            }
        }
    }

    /// Runs `body` with a client system joined to the node at `address`.
    static func withClient<T: Sendable>(
        of address: SocketAddress, settings: ClusterSettings, callTimeout: Double,
        _ body: (ClusterSystem, NodeID) async throws -> T
    ) async throws -> T {
        let client = try makeClient(settings: settings, callTimeout: callTimeout)
        defer { client.shutdown() }
        let peer = try await join(address, with: client)
        return try await body(client, peer.node)
    }

    /// A client system (not a member) with `settings`' cluster and secret.
    static func makeClient(settings: ClusterSettings, callTimeout: Double) throws -> ClusterSystem {
        var clientSettings = settings
        clientSettings.host = "127.0.0.1"
        clientSettings.port = 0
        clientSettings.callTimeout = callTimeout
        clientSettings.handshakeTimeout = min(settings.handshakeTimeout, callTimeout)
        return try ClusterSystem(settings: clientSettings, isMember: false)
    }

    /// Joins `client` to the node at `address`; a refusal or another secret becomes a
    /// ``Failure`` that names the node and what to do.
    static func join(_ address: SocketAddress, with client: ClusterSystem) async throws -> WireMessage.Handshake {
        do {
            return try await client.join(address)
        } catch RemoteCallError.unreachable(_, let reason) where reason == refusedPrefix + Connection.differentSecretsRefusal {
            throw Failure.otherSecret(address: address)
        } catch RemoteCallError.unreachable(_, let reason) where reason.hasPrefix(refusedPrefix) {
            throw Failure.refused(address: address, reason: String(reason.dropFirst(refusedPrefix.count)))
        } catch {
            if client.rejections[.authenticationFailed] > 0 { throw Failure.otherSecret(address: address) }
            throw error
        }
    }

    /// How ``ClusterSystem/join(_:)`` reports a node's refusal.
    private static let refusedPrefix = "refused: "

    /// An aligned text table.
    static func table(_ header: [String], _ rows: [[String]]) -> String {
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        return ([header] + rows).map { row in
            let line = row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell.padded(to: widths[column] + 2)
            }.joined()
            return String(line.reversed().drop { $0 == " " }.reversed())
        }.joined(separator: "\n") + "\n"
    }
}
