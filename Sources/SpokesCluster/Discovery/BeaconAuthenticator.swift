import FoundationEssentials
import Glibc

/// Seals this node's beacons and opens everyone else's, sans-IO.
///
/// A beacon datagram is an ``Envelope``: the cluster's name, whether it is a client's
/// query, the sender's wall-clock time and a fresh nonce, all in clear, and the beacon
/// itself. With a secret the beacon is sealed (``SealedBox``, authenticating the clear
/// fields), so a listener on the LAN learns nothing of the cluster's members, their
/// addresses or slots; without one (an open cluster, loopback only) it is plain JSON.
/// A sealed beacon is accepted only if it opens, its time is within ``replayWindow``
/// seconds of ours, and its nonce has not been seen in that window, so a recorded beacon
/// cannot be played back to announce a node that is gone or to point peers elsewhere.
struct BeaconAuthenticator: Sendable {
    /// Seconds a beacon's time may differ from ours (clock skew between machines plus
    /// delivery); also how long a nonce is remembered.
    static let replayWindow = 30.0
    /// Nonces remembered at most: far above what honest nodes send in a window (200
    /// nodes at 4 beacons a second is 24,000), and only sealed beacons are remembered.
    static let maximumRemembered = 65_536
    /// Senders whose last open beacon is remembered at most (each at most a datagram, 2
    /// KiB): a larger cluster, or datagrams from forged addresses, only read more again.
    static let maximumSendersRemembered = 256

    /// What arrives on the discovery port.
    struct Envelope: Codable, Sendable, Equatable {
        /// The cluster's name (never a secret: it says whose beacon this is).
        var cluster: String
        /// True for a client's query (a beacon without an address).
        var query: Bool
        var time: Double
        var nonce: String
        /// The beacon's JSON text in an open cluster; empty when sealed.
        var beacon: String
        /// The sealed beacon, base64, in a cluster with a secret; empty when open.
        var sealed: String
    }

    /// What to do with a datagram.
    enum Outcome: Sendable, Equatable {
        case accepted(Beacon)
        /// A valid beacon of another cluster: not for us, not hostile.
        case ignored
        case rejected(Rejection)
    }

    /// The node's secrets: beacons are sealed with the primary and opened with any.
    private let keyring: KeyringStore?
    private var seen: [String: Double] = [:]
    private var oldestSeen = Double.infinity
    /// In an open cluster, each sender's last beacon field as it came (quoted, escaped)
    /// and the beacon it held (nil: none), by the address it came from. A node's beacon
    /// changes seldom while its envelope's time and nonce change every time, so a field
    /// byte for byte the same as the sender's last one is not unescaped and read again:
    /// it says what it said then. Forgotten all at once past ``maximumSendersRemembered``.
    private var lastClearBeacons: [SocketAddress: ClearBeacon] = [:]

    /// A sender's last beacon field and what it held, shared, not copied: a beacon is a
    /// handshake of many fields, and copying it out of the table to compare its field
    /// was most of the cost of opening a beacon seen before.
    private final class ClearBeacon: Sendable {
        let field: [UInt8]
        let beacon: Beacon?

        init(field: [UInt8], beacon: Beacon?) {
            self.field = field
            self.beacon = beacon
        }
    }

    init(keyring: KeyringStore?) {
        self.keyring = keyring
    }

    /// A beacon authenticator holding `secret` alone (nil: an open cluster).
    init(secret: ClusterSecret?) {
        self.init(keyring: secret.map { KeyringStore(Keyring(primary: $0)) })
    }

    /// The datagram announcing `beacon` at wall-clock time `now`.
    func seal(_ beacon: Beacon, now: Double) -> [UInt8] {
        let body = BeaconCodec.encode(beacon)
        var envelope = Envelope(cluster: beacon.cluster, query: beacon.address.isEmpty, time: now, nonce: randomBytes(16).hex, beacon: "", sealed: "")
        if let keyring {
            envelope.sealed = Data(keyring.primary.beacons.seal(body, authenticating: Self.associated(envelope))).base64EncodedString()
        } else {
            envelope.beacon = String(decoding: body, as: UTF8.self)
        }
        return BeaconCodec.encode(envelope) ?? Array((try? JSONEncoder().encode(envelope)) ?? Data())
    }

    /// The envelope in `datagram`: read by hand in the form this build writes, else by
    /// `JSONDecoder` (an earlier release's beacon); nil when it is none, or too large.
    private static func envelope(in bytes: ArraySlice<UInt8>) -> Envelope? {
        BeaconCodec.envelope(bytes) ?? (try? JSONDecoder().decode(Envelope.self, from: Data(bytes)))
    }

    /// `datagram`'s bytes as one slice; nil when it is larger than any beacon (not read).
    private static func bytes<Bytes: Collection<UInt8>>(of datagram: Bytes) -> ArraySlice<UInt8>? {
        guard datagram.count <= Beacon.maximumBeaconSize else { return nil }
        return datagram as? ArraySlice<UInt8> ?? Array(datagram)[...]
    }

    /// The beacon in `body`, read as ``envelope(in:)`` reads envelopes.
    private static func beacon(in body: [UInt8]) -> Beacon? {
        BeaconCodec.beacon(body[...]) ?? (try? JSONDecoder().decode(Beacon.self, from: Data(body)))
    }

    /// Checks a received datagram at wall-clock time `now`; `source`, where it came
    /// from, lets an open cluster's beacon that did not change since that sender's last
    /// one skip being read again.
    mutating func open<Bytes: Collection<UInt8>>(_ datagram: Bytes, cluster: String, now: Double, from source: SocketAddress? = nil) -> Outcome {
        guard let bytes = Self.bytes(of: datagram) else { return .rejected(.malformedBeacon) }
        if keyring == nil, let source, let outcome = openInClear(bytes, cluster: cluster, from: source) { return outcome }
        guard let envelope = Self.envelope(in: bytes) else { return .rejected(.malformedBeacon) }
        let body: [UInt8]
        if let keyring {
            let associated = Self.associated(envelope)
            guard let sealed = Data(base64Encoded: envelope.sealed),
                  let opened = keyring.all.lazy.compactMap({ $0.beacons.open(sealed, authenticating: associated) }).first
            else { return .rejected(.unauthenticatedBeacon) }
            guard envelope.time.isFinite, abs(envelope.time - now) <= Self.replayWindow else { return .rejected(.replayedBeacon) }
            forget(before: now - Self.replayWindow)
            guard seen[envelope.nonce] == nil else { return .rejected(.replayedBeacon) }
            seen[envelope.nonce] = envelope.time
            oldestSeen = min(oldestSeen, envelope.time)
            body = opened
        } else if !envelope.sealed.isEmpty {
            // A beacon of a cluster with a secret: this open node could not join it anyway.
            return .ignored
        } else {
            body = Array(envelope.beacon.utf8)
        }
        return Self.outcome(of: Self.beacon(in: body), cluster: cluster)
    }

    /// An open cluster's datagram from `source` in the form this build writes: answered
    /// from that sender's last beacon field when it holds the same bytes, else read and
    /// kept. Nil when it is not in that form or holds a sealed beacon (read as any
    /// datagram is).
    private mutating func openInClear(_ bytes: ArraySlice<UInt8>, cluster: String, from source: SocketAddress) -> Outcome? {
        let last = lastClearBeacons[source]
        guard let (field, isKnown) = BeaconCodec.clearBeaconField(bytes, known: last?.field) else { return nil }
        if isKnown, let last { return Self.outcome(of: last.beacon, cluster: cluster) }
        guard let text = BeaconCodec.string(quoted: field) else { return nil }
        let beacon = Self.beacon(in: Array(text.utf8))
        if lastClearBeacons.count >= Self.maximumSendersRemembered { lastClearBeacons.removeAll() }
        lastClearBeacons[source] = ClearBeacon(field: Array(field), beacon: beacon)
        return Self.outcome(of: beacon, cluster: cluster)
    }

    /// A beacon read from a datagram (nil: none could be) of `cluster`, or not.
    private static func outcome(of beacon: Beacon?, cluster: String) -> Outcome {
        guard let beacon else { return .rejected(.malformedBeacon) }
        // Any protocol version of this cluster is accepted: the handshake the beacon leads
        // to agrees a version, or refuses with both ranges and what to do, which a
        // silently ignored beacon would never say (Docs/upgrades.md).
        guard beacon.cluster == cluster else { return .ignored }
        return .accepted(beacon)
    }

    /// What a beacon that was not accepted claims to be, read without trusting it: for
    /// telling a user that nodes were heard but hold another secret (or none), or belong
    /// to another cluster. A sealed beacon shows only its cluster, so its node is named by
    /// the address it came from, `source`. Nil when the datagram is not a beacon at all,
    /// or is a client's query (no node). Names are cut to printable ASCII of at most 40
    /// characters: they come from strangers.
    static func peek<Bytes: Collection<UInt8>>(_ datagram: Bytes, source: SocketAddress) -> HeardBeacon? {
        guard let bytes = bytes(of: datagram), let envelope = envelope(in: bytes), !envelope.query else { return nil }
        func printable(_ text: String) -> String {
            String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F }.prefix(40)))
        }
        if !envelope.sealed.isEmpty {
            return HeardBeacon(cluster: printable(envelope.cluster), node: "a node at \(source.host)", signed: true)
        }
        guard let beacon = beacon(in: Array(envelope.beacon.utf8)), !beacon.address.isEmpty else { return nil }
        return HeardBeacon(cluster: printable(beacon.cluster), node: printable(beacon.node.name), signed: false)
    }

    /// The clear fields a sealed beacon's box authenticates, as a JSON array (no two
    /// different field lists encode alike).
    static func associated(_ envelope: Envelope) -> [UInt8] {
        let fields = [envelope.cluster, String(envelope.query), String(envelope.time.bitPattern), envelope.nonce]
        return Array((try? JSONEncoder().encode(fields)) ?? Data())
    }

    /// Drops nonces older than `cutoff`, and the oldest ones when over the cap.
    private mutating func forget(before cutoff: Double) {
        if oldestSeen < cutoff {
            seen = seen.filter { $0.value >= cutoff }
            oldestSeen = seen.values.min() ?? .infinity
        }
        if seen.count >= Self.maximumRemembered {
            let keep = seen.sorted { $0.value > $1.value }.prefix(Self.maximumRemembered / 2)
            seen = Dictionary(uniqueKeysWithValues: keep.map { ($0.key, $0.value) })
            oldestSeen = seen.values.min() ?? .infinity
        }
    }
}

/// A beacon heard but not accepted, as it claims to be (see ``BeaconAuthenticator/peek(_:source:)``).
public struct HeardBeacon: Sendable, Hashable {
    /// The cluster it names.
    public var cluster: String
    /// The node it names.
    public var node: String
    /// Whether it carries a tag: its node holds a secret (not necessarily ours).
    public var signed: Bool
}
