/// Why a node cannot serve its dashboard.
public enum DashboardError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Beyond loopback without a cluster secret (and without `--insecure`).
    case insecureAddress(host: String)
    /// The address could not be bound.
    case cannotListen(address: String, reason: String)

    public var description: String {
        switch self {
        case .insecureAddress(let host):
            "the dashboard would listen on \(host) without a cluster secret, so anyone who can reach it could watch the cluster; give the cluster a secret (see SECURITY.md), listen on 127.0.0.1, or pass --insecure"
        case .cannotListen(let address, let reason):
            "cannot serve the dashboard on \(address): \(reason); choose another port with --dashboard PORT (0 picks a free one) or dashboard.port in cluster.yaml"
        }
    }
}
