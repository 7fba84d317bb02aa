/// Why a call to a distributed actor on another node failed. Each case names the peer or
/// actor involved.
public enum RemoteCallError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The connection to the node dropped while the call was waiting, or before it was sent.
    case peerDisconnected(node: String, reason: String)
    /// No reply within the deadline.
    case timedOut(target: String, node: String, seconds: Double)
    /// The remote function threw; its type and description travel back.
    case remoteError(type: String, message: String, node: String)
    /// No such actor on its node (never made, already gone, or the node restarted).
    case actorNotFound(String)
    /// This node has no connection to the actor's node and none could be made.
    case unreachable(node: String, reason: String)
    /// An argument or return value could not be encoded or decoded.
    case serializationFailed(String)

    public var description: String {
        switch self {
        case .peerDisconnected(let node, let reason): "peer disconnected: \(node) (\(reason))"
        case .timedOut(let target, let node, let seconds): "call \(target) to \(node) timed out after \(seconds) s"
        case .remoteError(let type, let message, let node): "\(node) threw \(type): \(message)"
        case .actorNotFound(let id): "actor not found: \(id)"
        case .unreachable(let node, let reason): "cannot reach \(node): \(reason)"
        case .serializationFailed(let detail): "serialization failed: \(detail)"
        }
    }
}
