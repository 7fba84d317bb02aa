import FoundationEssentials
import Glibc
import Synchronization

/// The UDP port a node takes probes on (the shell of ``Prober``): bound to the node's
/// cluster address, the same host and port number as its TCP listener, so a member's
/// address says where to probe it. Its runtime's network reads datagrams; each is
/// opened with a ``ProbeSeal`` (rejections are counted, as for beacons) and handed on
/// with the address it came from; any thread may send.
final class ProbeChannel: Sendable {
    private let port: any DatagramPort
    private let seal: ProbeSeal
    private let rejections: RejectionCounters

    /// Binds `address` (UDP) on `network`. Throws when the port is taken for UDP (the
    /// node then runs without probes, on heartbeats alone).
    init(address: SocketAddress, keyring: KeyringStore?, rejections: RejectionCounters, network: any RuntimeNetwork) throws(TransportError) {
        seal = ProbeSeal(keyring: keyring)
        self.rejections = rejections
        port = try network.bindDatagrams(on: address, shared: false)
    }

    /// Starts receiving; `onMessage` gets each accepted message and the `host:port` it
    /// came from.
    func start(onMessage: @escaping @Sendable (Prober.Message, String) -> Void) {
        port.startReceiving(maximumSize: ProbeSeal.maximumSize) { [seal, rejections] bytes, source in
            switch seal.open(bytes) {
            case .accepted(let message):
                onMessage(message, source.description)
            case .ignored:
                break
            case .rejected(let rejection):
                rejections.count(rejection)
            }
        }
    }

    /// Stops receiving (within 0.1 s on a machine) and frees the port.
    func stop() {
        port.stop()
    }

    /// Sends `message` to `address` (`host:port`); a bad address or a failed send is
    /// dropped, as a lost datagram is.
    func send(_ message: Prober.Message, to address: String) {
        guard let target = try? SocketAddress(parsing: address) else { return }
        port.send(seal.seal(message), to: target)
    }
}
