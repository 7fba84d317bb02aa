import Foundation
import Synchronization

/// The UDP socket a node takes probes on (the shell of ``Prober``): bound to the node's
/// cluster address, the same host and port number as its TCP listener, so a member's
/// address says where to probe it. One thread reads datagrams, opens them with a
/// ``ProbeSeal`` (rejections are counted, as for beacons) and hands each message on with
/// the address it came from; any thread may send.
final class ProbeChannel: Sendable {
    private let fd: Int32
    private let seal: ProbeSeal
    private let rejections: RejectionCounters
    private let stopped = Atomic<Bool>(false)

    /// Binds `address` (UDP). Throws when the port is taken for UDP (the node then runs
    /// without probes, on heartbeats alone).
    init(address: SocketAddress, secret: ClusterSecret?, rejections: RejectionCounters) throws(TransportError) {
        seal = ProbeSeal(secret: secret)
        self.rejections = rejections
        fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .socketFailed(operation: "udp socket for", address: address.description, errno: errno) }
        var local = address.sockaddr
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            let code = errno
            close(fd)
            throw .socketFailed(operation: "bind the probe port", address: address.description, errno: code)
        }
    }

    /// Starts the reading thread; `onMessage` gets each accepted message and the
    /// `host:port` it came from.
    func start(onMessage: @escaping @Sendable (Prober.Message, String) -> Void) {
        let thread = Thread { [self] in run(onMessage: onMessage) }
        thread.name = "spokes.probes"
        thread.start()
    }

    /// Stops the thread within 0.1 s; it closes the socket.
    func stop() {
        stopped.store(true, ordering: .releasing)
    }

    /// Sends `message` to `address` (`host:port`); a bad address or a failed send is
    /// dropped, as a lost datagram is.
    func send(_ message: Prober.Message, to address: String) {
        guard !stopped.load(ordering: .acquiring), let target = try? SocketAddress(parsing: address) else { return }
        let bytes = seal.seal(message)
        var destination = target.sockaddr
        _ = bytes.withUnsafeBytes { buffer in
            withUnsafePointer(to: &destination) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT), $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
    }

    private func run(onMessage: @Sendable (Prober.Message, String) -> Void) {
        var buffer = [UInt8](repeating: 0, count: ProbeSeal.maximumSize + 1)
        while !stopped.load(ordering: .acquiring) {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            var source = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let count = buffer.withUnsafeMutableBytes { bytes in
                withUnsafeMutablePointer(to: &source) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(fd, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT), $0, &length) }
                }
            }
            guard count > 0 else { continue }
            switch seal.open(buffer[..<count]) {
            case .accepted(let message):
                onMessage(message, SocketAddress(source).description)
            case .ignored:
                break
            case .rejected(let rejection):
                rejections.count(rejection)
            }
        }
        close(fd)
    }
}
