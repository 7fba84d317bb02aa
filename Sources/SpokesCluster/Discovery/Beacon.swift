/// What a node announces over UDP: who it is and where to connect to it.
public struct Beacon: Sendable, Hashable, Codable {
    public var protocolVersion: Int
    public var cluster: String
    public var node: NodeID
    /// The node's TCP address, `host:port`.
    public var address: String
    public var slots: Int

    public init(protocolVersion: Int = WireMessage.protocolVersion, cluster: String, node: NodeID, address: String, slots: Int) {
        self.protocolVersion = protocolVersion
        self.cluster = cluster
        self.node = node
        self.address = address
        self.slots = slots
    }

    /// Largest beacon datagram accepted; anything larger is ignored unread.
    static let maximumSize = 2048
}
