import Foundation

/// Seals this node's beacons and checks everyone else's, sans-IO.
///
/// A beacon datagram is an ``Envelope``: the beacon's JSON text, the sender's wall-clock
/// time, a fresh nonce, and `HMAC(K, time ‖ nonce ‖ beacon)` with the secret's beacon key.
/// A beacon is accepted only if its tag is right, its time is within ``replayWindow``
/// seconds of ours, and its nonce has not been seen in that window, so a recorded beacon
/// cannot be played back to announce a node that is gone or to point peers elsewhere.
/// Without a secret (an open cluster) beacons carry no tag and only the JSON is checked.
struct BeaconAuthenticator: Sendable {
    /// Seconds a beacon's time may differ from ours (clock skew between machines plus
    /// delivery); also how long a nonce is remembered.
    static let replayWindow = 30.0
    /// Nonces remembered at most: far above what honest nodes send in a window (200
    /// nodes at 4 beacons a second is 24,000), and only tagged beacons are remembered.
    static let maximumRemembered = 65_536

    /// What arrives on the discovery port.
    struct Envelope: Codable, Sendable {
        var beacon: String
        var time: Double
        var nonce: String
        var tag: String
    }

    /// What to do with a datagram.
    enum Outcome: Sendable, Equatable {
        case accepted(Beacon)
        /// A valid beacon of another cluster or protocol version: not for us, not hostile.
        case ignored
        case rejected(Rejection)
    }

    private let key: HMAC?
    private var seen: [String: Double] = [:]
    private var oldestSeen = Double.infinity

    init(secret: ClusterSecret?) {
        key = secret?.key(for: .beacon)
    }

    /// The datagram announcing `beacon` at wall-clock time `now`.
    func seal(_ beacon: Beacon, now: Double) -> [UInt8] {
        let body = (try? JSONEncoder().encode(beacon)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        let nonce = randomBytes(16).hex
        let sealed = key.map { tag(with: $0, time: now, nonce: nonce, body: body).hex } ?? ""
        let envelope = Envelope(beacon: body, time: now, nonce: nonce, tag: sealed)
        return Array((try? JSONEncoder().encode(envelope)) ?? Data())
    }

    /// Checks a received datagram at wall-clock time `now`.
    mutating func open<Bytes: Collection<UInt8>>(_ datagram: Bytes, cluster: String, now: Double) -> Outcome {
        guard datagram.count <= Beacon.maximumBeaconSize,
              let envelope = try? JSONDecoder().decode(Envelope.self, from: Data(datagram))
        else { return .rejected(.malformedBeacon) }
        if let key {
            guard !envelope.tag.isEmpty,
                  constantTimeEquals(Array(envelope.tag.utf8), Array(tag(with: key, time: envelope.time, nonce: envelope.nonce, body: envelope.beacon).hex.utf8))
            else { return .rejected(.unauthenticatedBeacon) }
            guard envelope.time.isFinite, abs(envelope.time - now) <= Self.replayWindow else { return .rejected(.replayedBeacon) }
            forget(before: now - Self.replayWindow)
            guard seen[envelope.nonce] == nil else { return .rejected(.replayedBeacon) }
            seen[envelope.nonce] = envelope.time
            oldestSeen = min(oldestSeen, envelope.time)
        } else if !envelope.tag.isEmpty {
            // A beacon of a cluster with a secret: this open node could not join it anyway.
            return .ignored
        }
        guard let beacon = try? JSONDecoder().decode(Beacon.self, from: Data(envelope.beacon.utf8)) else {
            return .rejected(.malformedBeacon)
        }
        guard beacon.protocolVersion == WireMessage.protocolVersion, beacon.cluster == cluster else { return .ignored }
        return .accepted(beacon)
    }

    /// What a beacon that was not accepted claims to be, read without trusting it: for
    /// telling a user that nodes were heard but hold another secret (or none), or belong
    /// to another cluster. Nil when the datagram is not a beacon at all. Names are cut to
    /// printable ASCII of at most 40 characters: they come from strangers.
    /// A client's query (a beacon without an address) is no node: nil.
    static func peek<Bytes: Collection<UInt8>>(_ datagram: Bytes) -> HeardBeacon? {
        guard datagram.count <= Beacon.maximumBeaconSize,
              let envelope = try? JSONDecoder().decode(Envelope.self, from: Data(datagram)),
              let beacon = try? JSONDecoder().decode(Beacon.self, from: Data(envelope.beacon.utf8)),
              !beacon.address.isEmpty
        else { return nil }
        func printable(_ text: String) -> String {
            String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F }.prefix(40)))
        }
        return HeardBeacon(cluster: printable(beacon.cluster), node: printable(beacon.node.name), signed: !envelope.tag.isEmpty)
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

    private func tag(with key: HMAC, time: Double, nonce: String, body: String) -> [UInt8] {
        key.authenticationCode { hasher in
            hasher.update(Array("\(time.bitPattern)\n\(nonce)\n".utf8))
            hasher.update(Array(body.utf8))
        }
    }
}

/// A beacon heard but not accepted, as it claims to be (see ``BeaconAuthenticator/peek(_:)``).
public struct HeardBeacon: Sendable, Hashable {
    /// The cluster it names.
    public var cluster: String
    /// The node it names.
    public var node: String
    /// Whether it carries a tag: its node holds a secret (not necessarily ours).
    public var signed: Bool
}
