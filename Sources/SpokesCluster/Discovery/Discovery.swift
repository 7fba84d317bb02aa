import FoundationEssentials
import Glibc
import SpokesConcurrency
import Synchronization

/// Finds peers with UDP beacons, over its runtime's network: a timer on the runtime's
/// clock sends this node's beacon every `interval`, and the port's reader takes others'. Beacons are sealed and checked by a
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
    /// When this node last beaconed and when it next will; the names it has heard.
    private struct Schedule {
        var nextSend = -Double.infinity
        var lastSent = -Double.infinity
        var heard = Set<String>()
        /// An early answer is waiting for ``Discovery/minimumAnswerGap`` to pass.
        var answerPending = false
    }

    private let port: any DatagramPort
    private let target: SocketAddress
    private let interval: Double
    private let beacon: Beacon?
    private let runtime: Runtime
    private let rejections: RejectionCounters
    private let authenticator: Mutex<BeaconAuthenticator>
    private let schedule = Mutex(Schedule())
    private let stopped = Atomic<Bool>(false)
    private let ignored = Atomic<Int>(0)

    /// Valid beacons of another cluster, ignored.
    var ignoredBeacons: Int { ignored.load(ordering: .relaxed) }

    /// The shortest time between two beacons a node sends early to answer newcomers: a
    /// flood of queries makes it beacon at most this often.
    static let minimumAnswerGap = 0.02
    /// The most node names a node remembers having heard (to answer each newcomer once);
    /// past it the memory starts again.
    static let maximumRemembered = 10_000

    /// Opens the discovery port on `runtime`'s network. `beacon` nil only listens; a
    /// beacon without an address is a client's query, sent every interval until stopped,
    /// that nodes answer at once.
    /// Beacons are sealed and opened with `keyring` (nil: an open cluster).
    init(settings: ClusterSettings, keyring: KeyringStore?, beacon: Beacon?, rejections: RejectionCounters, runtime: Runtime) throws(TransportError) {
        let port = settings.discoveryPort
        let broadcastAddress = settings.broadcastAddress
        let mode = settings.discoveryMode
        self.rejections = rejections
        self.runtime = runtime
        authenticator = Mutex(BeaconAuthenticator(keyring: keyring))
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
        // Loopback mode listens on the loopback broadcast address only: nothing from a LAN arrives.
        let local = SocketAddress(host: mode == .loopback ? "127.255.255.255" : "0.0.0.0", port: port)
        do {
            self.port = try runtime.network.bindDatagrams(on: local, shared: true)
        } catch {
            throw .socketFailed(operation: "bind discovery port", address: "\(port)", errno: Self.errno(of: error))
        }
    }

    private static func errno(of error: TransportError) -> Int32 {
        if case .socketFailed(_, _, let code) = error { return code }
        return EINVAL
    }

    /// Starts listening and beaconing; `onBeacon` receives every valid beacon of
    /// `cluster`, including this node's own; `onStranger` what the beacons that were not
    /// accepted (another cluster, another secret or none) claim to be.
    func start(cluster: String, onBeacon: @escaping @Sendable (Beacon) -> Void, onStranger: (@Sendable (HeardBeacon) -> Void)? = nil) {
        port.startReceiving(maximumSize: Beacon.maximumBeaconSize) { [self] bytes, source in
            received(bytes, from: source, cluster: cluster, onBeacon: onBeacon, onStranger: onStranger)
        }
        guard beacon != nil else { return }
        Task { [self] in
            while !stopped.load(ordering: .acquiring) {
                sendIfDue()
                let wait = schedule.withLock { $0.nextSend } - runtime.now
                try? await runtime.sleep(for: max(Self.minimumAnswerGap, min(interval, wait)))
            }
        }
    }

    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        port.stop()
    }

    /// Sends this node's beacon if its time has come.
    private func sendIfDue() {
        guard let beacon, !stopped.load(ordering: .acquiring) else { return }
        let now = runtime.now
        let due = schedule.withLock { schedule in
            guard now >= schedule.nextSend else { return false }
            schedule.nextSend = now + interval
            schedule.lastSent = now
            return true
        }
        guard due else { return }
        port.send(authenticator.withLock { $0.seal(beacon, now: runtime.unixNow) }, to: target)
    }

    /// Answers a newcomer soon: now if the last beacon is ``minimumAnswerGap`` old,
    /// else once it is (one answer waits at a time).
    private func answerSoon() {
        let now = runtime.now
        let wait = schedule.withLock { schedule -> Double? in
            let earliest = max(now, schedule.lastSent + Self.minimumAnswerGap)
            schedule.nextSend = min(schedule.nextSend, earliest)
            guard earliest > now else { return 0 }
            guard !schedule.answerPending else { return nil }
            schedule.answerPending = true
            return earliest - now
        }
        guard let wait else { return }
        guard wait > 0 else { return sendIfDue() }
        Task { [self] in
            try? await runtime.sleep(for: wait)
            schedule.withLock { $0.answerPending = false }
            sendIfDue()
        }
    }

    private func received(
        _ bytes: ArraySlice<UInt8>, from source: SocketAddress, cluster: String, onBeacon: @Sendable (Beacon) -> Void, onStranger: (@Sendable (HeardBeacon) -> Void)?
    ) {
        let answers = beacon.map { !$0.address.isEmpty } ?? false
        switch authenticator.withLock({ $0.open(bytes, cluster: cluster, now: runtime.unixNow, from: source) }) {
        case .accepted(let received):
            if (try? received.checkRanges()) == nil {
                rejections.count(.valueOutOfRange)
                return
            }
            let isQuery = received.address.isEmpty
            if answers {
                let newcomer = isQuery || schedule.withLock { schedule in
                    guard !schedule.heard.contains(received.node.name) else { return false }
                    if schedule.heard.count >= Self.maximumRemembered { schedule.heard.removeAll() }
                    schedule.heard.insert(received.node.name)
                    return true
                }
                if newcomer { answerSoon() }
            }
            if !isQuery { onBeacon(received) }
        case .ignored:
            ignored.add(1, ordering: .relaxed)
            if let onStranger, let heard = BeaconAuthenticator.peek(bytes, source: source) { onStranger(heard) }
        case .rejected(let rejection):
            rejections.count(rejection)
            if let onStranger, rejection == .unauthenticatedBeacon, let heard = BeaconAuthenticator.peek(bytes, source: source) { onStranger(heard) }
        }
    }
}
