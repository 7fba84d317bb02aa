/// Everything a node needs to know to run. Defaults suit several nodes on one machine;
/// `cluster.yaml`, `SPOKES_*` variables and flags override them, in that order.
public struct ClusterSettings: Sendable, Hashable, Codable {
    /// Nodes only talk to nodes of the same cluster.
    public var cluster = "spokes"
    /// This node's name, unique in the cluster; empty picks `node-<random>`.
    public var nodeName = ""
    /// Address to listen on. Loopback by default: a LAN is an explicit choice.
    public var host = "127.0.0.1"
    /// TCP port; 0 picks any free port.
    public var port: UInt16 = 0
    /// Tasks this node runs at once.
    public var slots = 4
    /// Largest frame accepted from a peer, in bytes.
    public var maximumFrameSize = 8 * 1024 * 1024
    /// Seconds a remote call may take before it fails with a timeout.
    public var callTimeout = 30.0
    /// Seconds to establish a connection and exchange handshakes.
    public var handshakeTimeout = 3.0
    /// Seconds between heartbeats on each connection.
    public var heartbeatInterval = 0.2
    /// Seconds of silence after which a peer is suspect.
    public var suspectTimeout = 0.6
    /// Seconds of silence after which a peer is dead and its calls fail.
    public var deadTimeout = 1.2
    /// Static peers to dial, `host:port`, in every discovery mode.
    public var seeds: [String] = []

    public init() {}
}
