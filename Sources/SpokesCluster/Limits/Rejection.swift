/// Why a node turned away something a peer, a client or a stranger sent. Each is
/// counted (``RejectionCounters``) and shown by `spokes status --json` under
/// `rejected`, by its raw value.
public enum Rejection: String, Sendable, Hashable, Codable, CaseIterable {
    /// A frame longer than `limits.max_frame_bytes` (or 64 KiB before the handshake).
    case frameTooLarge = "frame_too_large"
    /// A frame that is not a message: bad JSON, invalid UTF-8, wrong field types.
    case malformedFrame = "malformed_frame"
    /// JSON nested deeper than `limits.max_json_depth`.
    case jsonTooDeep = "json_too_deep"
    /// A JSON array longer than `limits.max_array_length`.
    case arrayTooLong = "array_too_long"
    /// A connection that did not finish its handshake within `limits.handshake_timeout`.
    case handshakeTimeout = "handshake_timeout"
    /// A handshake refused: another cluster, protocol version, or secret setting.
    case handshakeRefused = "handshake_refused"
    /// A handshake whose proof shows the peer does not hold the cluster secret.
    case authenticationFailed = "authentication_failed"
    /// A dialler that hung up after our welcome without sending its proof: typically a
    /// node with another secret, which found that our proof does not match its secret.
    case handshakeAbandoned = "handshake_abandoned"
    /// A frame whose tag is wrong: forged, replayed, reordered or corrupted.
    case frameAuthenticationFailed = "frame_authentication_failed"
    /// A message other than `hello` before the handshake finished.
    case messageBeforeHandshake = "message_before_handshake"
    /// A connection over `limits.max_connections`.
    case tooManyConnections = "too_many_connections"
    /// A connection over `limits.max_connections_per_address` from one address.
    case tooManyConnectionsFromAddress = "too_many_connections_per_address"
    /// A connection still in its handshake, closed (oldest first) to make room for a new
    /// one when `limits.max_handshaking_connections` were handshaking.
    case tooManyHandshakes = "too_many_handshakes"
    /// A call over `limits.max_calls_per_connection` in flight on one connection.
    case tooManyCalls = "too_many_calls_in_flight"
    /// A peer that stopped reading while `limits.max_send_queue_bytes` waited for it.
    case sendQueueFull = "send_queue_full"
    /// A message type this node does not know.
    case unknownMessageType = "unknown_message_type"
    /// A call to an actor this node does not host.
    case unknownActor = "unknown_actor"
    /// A task of a kind this node has not registered.
    case unknownTaskKind = "unknown_task_kind"
    /// A number out of the range this node accepts for it, in a handshake, a beacon, a
    /// call argument or a task's input (see ``OutOfRange``).
    case valueOutOfRange = "value_out_of_range"
    /// A job over a size limit its workload declares (the bike workload's
    /// `limits.max_users`, `limits.max_paths`, `limits.max_stations`).
    case jobTooLarge = "job_too_large"
    /// A datagram on the discovery port that is not a beacon.
    case malformedBeacon = "beacon_malformed"
    /// A beacon without a valid tag for this cluster's secret.
    case unauthenticatedBeacon = "beacon_unauthenticated"
    /// A beacon seen before, or stamped outside the replay window.
    case replayedBeacon = "beacon_replayed"
    /// A datagram on a node's probe port (its cluster port, UDP) that is not a probe.
    case malformedProbe = "probe_malformed"
    /// A probe without a valid tag for this cluster's secret.
    case unauthenticatedProbe = "probe_unauthenticated"
}
