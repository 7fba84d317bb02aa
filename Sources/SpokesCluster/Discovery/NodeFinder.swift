import Synchronization
import SpokesConcurrency

/// Finds a node for a client (`spokes status`, `spokes submit`) by listening for the
/// cluster's beacons. It sends a query (a beacon without an address, sealed like a node's)
/// that nodes answer at once, so it need not wait for their next interval. When none is found it says why as exactly as
/// beacons allow: nothing heard, nodes of other clusters, or nodes of this cluster that
/// hold another secret (or none).
public enum NodeFinder {
    /// Why no node was found.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        case discoveryOff
        /// Nothing at all was heard.
        case noNodeFound(cluster: String, port: UInt16, seconds: Double)
        /// Nodes naming this cluster were heard, but their beacons did not check out with
        /// this client's secret: they hold another secret, or none (`signed` false), or
        /// this client holds none (`clientHasSecret` false).
        case otherSecret(cluster: String, port: UInt16, nodes: [String], signed: Bool, clientHasSecret: Bool)
        /// Only nodes of other clusters were heard: cluster name to node names.
        case otherClusters(cluster: String, port: UInt16, seconds: Double, heard: [String: [String]])

        public var description: String {
            switch self {
            case .discoveryOff:
                return "discovery is off: give the node's address with --to HOST:PORT"
            case .noNodeFound(let cluster, let port, let seconds):
                return "no node of cluster '\(cluster)' was heard on discovery port \(port) within \(seconds.compactSeconds) s; start one with 'spokes node', or give --to HOST:PORT"
            case .otherSecret(let cluster, let port, let nodes, let signed, let clientHasSecret):
                let heard = "nodes of cluster '\(cluster)' were heard on discovery port \(port) (\(Self.list(nodes)))"
                if !clientHasSecret {
                    return "\(heard), but they hold a cluster secret and this client has none: set SPOKES_SECRET or name the secret's file (secret_file in --config)"
                }
                if !signed {
                    return "\(heard), but they run without a secret and this client has one (SPOKES_SECRET or secret_file): give both the same secret, or neither"
                }
                return "\(heard), but they hold another secret than this client: give this client the cluster's secret (SPOKES_SECRET or secret_file)"
            case .otherClusters(let cluster, let port, let seconds, let heard):
                let others = heard.sorted { $0.key < $1.key }.map { "'\($0.key)' (\(Self.list($0.value)))" }.joined(separator: ", ")
                let hint = heard.count == 1 ? "give --cluster \(heard.keys.first ?? "")" : "give --cluster NAME"
                return "no node of cluster '\(cluster)' was heard on discovery port \(port) within \(seconds.compactSeconds) s, only nodes of \(heard.count == 1 ? "cluster" : "clusters") \(others); \(hint), or --to HOST:PORT"
            }
        }

        /// At most five names, then how many more.
        private static func list(_ names: [String]) -> String {
            names.count <= 5 ? names.joined(separator: ", ") : names.prefix(5).joined(separator: ", ") + " and \(names.count - 5) more"
        }
    }

    /// The address of the first node of `settings.cluster` heard within `timeout` seconds
    /// (on `runtime`'s clock and network).
    public static func firstNode(settings: ClusterSettings, timeout: Double, runtime: Runtime = .real) async throws -> SocketAddress {
        guard settings.discoveryMode != .off else { throw Failure.discoveryOff }
        let query = Beacon(cluster: settings.cluster, node: NodeID(name: "query-\(randomBytes(4).hex)", incarnation: 0), address: "",
                           slots: 0, authenticated: settings.secret != nil)
        let discovery = try Discovery(
            settings: settings, keyring: settings.keyring.map(KeyringStore.init), beacon: query, rejections: RejectionCounters(), runtime: runtime)
        let found = Promise<SocketAddress, Never>()
        let strangers = Mutex<[HeardBeacon]>([])
        discovery.start(cluster: settings.cluster, onBeacon: { beacon in
            if let address = try? SocketAddress(parsing: beacon.address) { found.resolve(address) }
        }, onStranger: { heard in
            strangers.withLock { if $0.count < 1_000, !$0.contains(heard) { $0.append(heard) } }
        })
        defer { discovery.stop() }
        do {
            return try await withTimeout(seconds: timeout, clock: runtime.clock) { await found.future.value }
        } catch is TimeoutError {
            throw failure(heard: strangers.withLock { $0 }, settings: settings, seconds: timeout)
        }
    }

    /// The beacons of `settings.cluster` heard within `timeout` seconds (on `runtime`'s
    /// clock and network), by node name: a query is sent (nodes answer it at once), then
    /// beacons are gathered until every name in `expected` was heard or the time is up.
    /// What `spokes doctor` learns of whose beacons reach this machine.
    public static func beacons(settings: ClusterSettings, expecting expected: Set<String>, timeout: Double, runtime: Runtime = .real) async throws -> [String: Beacon] {
        guard settings.discoveryMode != .off else { throw Failure.discoveryOff }
        let query = Beacon(cluster: settings.cluster, node: NodeID(name: "query-\(randomBytes(4).hex)", incarnation: 0), address: "",
                           slots: 0, authenticated: settings.secret != nil)
        let discovery = try Discovery(
            settings: settings, keyring: settings.keyring.map(KeyringStore.init), beacon: query, rejections: RejectionCounters(), runtime: runtime)
        let heard = Mutex<[String: Beacon]>([:])
        let complete = Promise<Void, Never>()
        discovery.start(cluster: settings.cluster, onBeacon: { beacon in
            let all = heard.withLock { heard in
                if heard.count < 10_000 { heard[beacon.node.name] = beacon }
                return expected.isSubset(of: heard.keys)
            }
            if all { complete.resolve(()) }
        })
        defer { discovery.stop() }
        _ = try? await withTimeout(seconds: timeout, clock: runtime.clock) { await complete.future.value }
        return heard.withLock { $0 }
    }

    /// Why nothing was found, given the beacons heard and not accepted.
    static func failure(heard: [HeardBeacon], settings: ClusterSettings, seconds: Double) -> Failure {
        let port = settings.discoveryPort
        let ours = heard.filter { $0.cluster == settings.cluster }
        if !ours.isEmpty {
            return .otherSecret(cluster: settings.cluster, port: port, nodes: ours.map(\.node).uniqued(),
                                signed: ours.contains(where: \.signed), clientHasSecret: settings.secret != nil)
        }
        if !heard.isEmpty {
            return .otherClusters(cluster: settings.cluster, port: port, seconds: seconds,
                                  heard: Dictionary(grouping: heard, by: \.cluster).mapValues { $0.map(\.node).uniqued() })
        }
        return .noNodeFound(cluster: settings.cluster, port: port, seconds: seconds)
    }
}

private extension Array where Element == String {
    /// The names once each, in first-heard order.
    func uniqued() -> [String] {
        var seen: Set<String> = []
        return filter { seen.insert($0).inserted }
    }
}

private extension Double {
    /// `3`, `0.5`: seconds as a person writes them.
    var compactSeconds: String {
        rounded() == self && abs(self) < 1e15 ? String(Int(self)) : String(self)
    }
}
