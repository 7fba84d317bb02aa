/// What a node announces over UDP: exactly what it says in a TCP handshake (protocol
/// version, cluster, node id and incarnation, TCP address, cpu and waiting slots), so one type serves both.
public typealias Beacon = WireMessage.Handshake

extension WireMessage.Handshake {
    /// Largest beacon datagram accepted; anything larger is ignored unread.
    static let maximumBeaconSize = 2048
}
