import Foundation
import SpokesConcurrency
import Synchronization

/// Finds peers with UDP beacons. One dedicated thread both sends this node's beacon
/// every `interval` and receives others'. Beacons are sealed and checked by a
/// ``BeaconAuthenticator``: malformed, unauthenticated and replayed datagrams are
/// rejected and counted in `rejections`; beacons of other clusters are ignored.
///
/// A node answers a newcomer at once: when it hears a node it has not heard before, or a
/// client's query (a beacon without an address, see ``NodeFinder``), it sends its own
/// beacon right away instead of at its next interval, at most once per
/// ``minimumAnswerGap``. So a node that starts, or a `spokes status` that looks for one,
/// learns every node in a round trip, not in up to one interval.
///
/// Where beacons go is explicit: `loopback` sends to 127.255.255.255 (every node on
/// this machine, none elsewhere); `lan` sends only to the broadcast address the user
/// configured. Several nodes on one machine share the port (SO_REUSEADDR and
/// SO_REUSEPORT); broadcasts reach every one of them.
final class Discovery: Sendable {
    private let fd: Int32
    private let target: SocketAddress
    private let interval: Double
    private let beacon: Beacon?
    private let secret: ClusterSecret?
    private let rejections: RejectionCounters
    private let stopped = Atomic<Bool>(false)
    private let ignored = Atomic<Int>(0)

    /// Valid beacons of another cluster or protocol version, ignored.
    var ignoredBeacons: Int { ignored.load(ordering: .relaxed) }

    /// The shortest time between two beacons a node sends early to answer newcomers: a
    /// flood of queries makes it beacon at most this often.
    static let minimumAnswerGap = 0.02
    /// The most node names a node remembers having heard (to answer each newcomer once);
    /// past it the memory starts again.
    static let maximumRemembered = 10_000

    /// Opens the discovery socket. `beacon` nil only listens; a beacon without an address
    /// is a client's query, sent every interval until stopped, that nodes answer at once.
    init(settings: ClusterSettings, beacon: Beacon?, rejections: RejectionCounters) throws(TransportError) {
        let port = settings.discoveryPort
        let broadcastAddress = settings.broadcastAddress
        let mode = settings.discoveryMode
        secret = settings.secret
        self.rejections = rejections
        switch mode {
        case .loopback:
            target = SocketAddress(host: "127.255.255.255", port: port)
        case .lan:
            guard SocketAddress.ipv4(broadcastAddress) != nil else {
                throw .invalidAddress(broadcastAddress, reason: "lan discovery needs the LAN's broadcast address")
            }
            target = SocketAddress(host: broadcastAddress, port: port)
        case .off:
            throw .invalidAddress("", reason: "discovery is off")
        }
        interval = settings.discoveryInterval
        self.beacon = beacon
        fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .socketFailed(operation: "udp socket for", address: target.description, errno: errno) }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &yes, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(fd, SOL_SOCKET, SO_BROADCAST, &yes, socklen_t(MemoryLayout<Int32>.size))
        // Loopback mode listens on the loopback broadcast address only: nothing from a LAN arrives.
        var local = SocketAddress(host: mode == .loopback ? "127.255.255.255" : "0.0.0.0", port: port).sockaddr
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            let code = errno
            close(fd)
            throw .socketFailed(operation: "bind discovery port", address: "\(port)", errno: code)
        }
    }

    /// Starts the thread; `onBeacon` receives every valid beacon of `cluster`, including
    /// this node's own; `onStranger` what the beacons that were not accepted (another
    /// cluster, another secret or none) claim to be.
    func start(cluster: String, onBeacon: @escaping @Sendable (Beacon) -> Void, onStranger: (@Sendable (HeardBeacon) -> Void)? = nil) {
        let thread = Thread { [self] in run(cluster: cluster, onBeacon: onBeacon, onStranger: onStranger) }
        thread.name = "spokes.discovery"
        thread.start()
    }

    func stop() {
        stopped.store(true, ordering: .releasing)
    }

    private func run(cluster: String, onBeacon: @Sendable (Beacon) -> Void, onStranger: (@Sendable (HeardBeacon) -> Void)?) {
        var authenticator = BeaconAuthenticator(secret: secret)
        var nextSend = MonotonicClock.now
        var lastSent = -Double.infinity
        var heard = Set<String>()
        let answers = beacon.map { !$0.address.isEmpty } ?? false
        var buffer = [UInt8](repeating: 0, count: Beacon.maximumBeaconSize + 1)
        while !stopped.load(ordering: .acquiring) {
            let now = MonotonicClock.now
            if let beacon, now >= nextSend {
                let encoded = authenticator.seal(beacon, now: Date().timeIntervalSince1970)
                var destination = target.sockaddr
                _ = encoded.withUnsafeBytes { bytes in
                    withUnsafePointer(to: &destination) {
                        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                            sendto(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                        }
                    }
                }
                nextSend = now + interval
                lastSent = now
            }
            // Wake for the next beacon to send, and at least every 100 ms to notice stop().
            let wait = min(0.1, max(0.001, beacon == nil ? 0.1 : nextSend - MonotonicClock.now))
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Duration.clamped(seconds: wait).pollMilliseconds) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard count > 0 else { continue }
            switch authenticator.open(buffer[..<count], cluster: cluster, now: Date().timeIntervalSince1970) {
            case .accepted(let received):
                if (try? received.checkRanges()) == nil {
                    rejections.count(.valueOutOfRange)
                    continue
                }
                let isQuery = received.address.isEmpty
                if answers, isQuery || !heard.contains(received.node.name) {
                    nextSend = min(nextSend, max(MonotonicClock.now, lastSent + Self.minimumAnswerGap))
                    if !isQuery {
                        if heard.count >= Self.maximumRemembered { heard.removeAll() }
                        heard.insert(received.node.name)
                    }
                }
                if !isQuery { onBeacon(received) }
            case .ignored:
                ignored.add(1, ordering: .relaxed)
                if let onStranger, let heard = BeaconAuthenticator.peek(buffer[..<count]) { onStranger(heard) }
            case .rejected(let rejection):
                rejections.count(rejection)
                if let onStranger, rejection == .unauthenticatedBeacon, let heard = BeaconAuthenticator.peek(buffer[..<count]) { onStranger(heard) }
            }
        }
        close(fd)
    }
}
