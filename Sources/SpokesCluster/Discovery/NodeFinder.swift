import SpokesConcurrency

/// Finds a node for a client (`spokes status`, `spokes submit`) by listening for the
/// cluster's beacons, without sending any.
public enum NodeFinder {
    /// Why no node was found.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        case discoveryOff
        case noNodeFound(cluster: String, port: UInt16, seconds: Double)

        public var description: String {
            switch self {
            case .discoveryOff:
                "discovery is off: give the node's address with --to HOST:PORT"
            case .noNodeFound(let cluster, let port, let seconds):
                "no node of cluster '\(cluster)' was heard on discovery port \(port) within \(seconds) s; start one with 'spokes node', or give --to HOST:PORT"
            }
        }
    }

    /// The address of the first node of `settings.cluster` heard within `timeout` seconds.
    public static func firstNode(settings: ClusterSettings, timeout: Double) async throws -> SocketAddress {
        guard settings.discoveryMode != .off else { throw Failure.discoveryOff }
        let discovery = try Discovery(settings: settings, beacon: nil, rejections: RejectionCounters())
        let found = Promise<SocketAddress, Never>()
        discovery.start(cluster: settings.cluster) { beacon in
            if let address = try? SocketAddress(parsing: beacon.address) { found.resolve(address) }
        }
        defer { discovery.stop() }
        do {
            return try await withTimeout(seconds: timeout) { await found.future.value }
        } catch is TimeoutError {
            throw Failure.noNodeFound(cluster: settings.cluster, port: settings.discoveryPort, seconds: timeout)
        }
    }
}
