/// Why a node cannot start securely, or a secret cannot be used. Messages never
/// contain the secret itself.
public enum SecurityError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The secret is shorter than ``ClusterSecret/minimumLength`` bytes.
    case secretTooShort(source: String, length: Int)
    /// The secret file cannot be read.
    case unreadableSecretFile(path: String, reason: String)
    /// The secret file can be read by users other than its owner.
    case secretFileTooOpen(path: String, mode: String)
    /// A node without a secret was asked to listen beyond loopback.
    case insecureAddress(host: String)

    public var description: String {
        switch self {
        case .secretTooShort(let source, let length):
            "the cluster secret from \(source) is \(length) bytes; it needs at least \(ClusterSecret.minimumLength) "
                + "(e.g. generate one with: head -c 32 /dev/urandom | base64)"
        case .unreadableSecretFile(let path, let reason):
            "cannot read the secret file \(path): \(reason)"
        case .secretFileTooOpen(let path, let mode):
            "the secret file \(path) has mode \(mode), so other users can read it; run: chmod 600 \(path)"
        case .insecureAddress(let host):
            "refusing to listen on \(host) without a cluster secret: anyone who can reach it could join and run tasks. "
                + "Set SPOKES_SECRET or secret_file in cluster.yaml, or pass --insecure to run an open cluster on a network you trust"
        }
    }
}
