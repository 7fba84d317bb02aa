/// One node as this node sees it.
public struct Member: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Where a member is in its life, as this node sees it.
    public enum State: String, Sendable, Hashable, Codable, Comparable {
        /// Heard of (a beacon or a seed), not yet connected.
        case joining
        /// Connected and heard from recently.
        case alive
        /// Connected but silent for longer than the suspect timeout.
        case suspect
        /// Silent past the dead timeout, or its connection dropped: its calls fail.
        case dead
        /// Said goodbye.
        case left

        public static func < (lhs: State, rhs: State) -> Bool {
            let order: [State] = [.joining, .alive, .suspect, .dead, .left]
            return order.firstIndex(of: lhs)! < order.firstIndex(of: rhs)!
        }
    }

    public var node: NodeID
    /// Where it listens, `host:port`.
    public var address: String
    public var state: State
    public var slots: Int
    /// Waiting slots (``TaskCost/waiting``) it announced.
    public var waitingSlots: Int
    /// Monotonic seconds when it was last heard from.
    public var lastHeard: Double
    /// The wire protocol versions it speaks, from its handshake (or, until it connects,
    /// its beacon): what decides which behaviour every member understands
    /// (``ClusterNode/protocolVersion``).
    public var protocolVersions: ProtocolVersions

    public init(node: NodeID, address: String, state: State, slots: Int, waitingSlots: Int = 0, lastHeard: Double,
                protocolVersions: ProtocolVersions = .current) {
        self.node = node
        self.address = address
        self.state = state
        self.slots = slots
        self.waitingSlots = waitingSlots
        self.lastHeard = lastHeard
        self.protocolVersions = protocolVersions
    }

    public var description: String { "\(node) at \(address) (\(state.rawValue))" }
}
