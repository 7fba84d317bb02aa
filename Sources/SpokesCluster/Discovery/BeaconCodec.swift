/// Discovery's datagrams as JSON by hand (issue 33 §1): every node reads every other's
/// beacon several times a second, so the beacon (``Beacon``) and its envelope
/// (``BeaconAuthenticator/Envelope``) are written with their keys in one fixed order and
/// read back in exactly that form by ``HandJSON``'s reader.
///
/// The bytes are JSON that every release's `JSONDecoder` reads (an earlier node hears a
/// later one's beacons), and whatever is off this form, an earlier release's beacon
/// (`JSONEncoder`'s keys come in any order) or anything malformed, reads as nil here and
/// goes to `JSONDecoder` as before. Sealing is unchanged: the sealed box holds the
/// beacon's bytes, whatever their form, and authenticates the envelope's clear fields as
/// ``BeaconAuthenticator`` always has. `BeaconCodecTests` checks both ways against
/// `Codable`, and seeded mutations.
enum BeaconCodec {
    /// The JSON of `beacon`.
    static func encode(_ beacon: Beacon) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(192 + beacon.cluster.utf8.count + beacon.node.name.utf8.count + beacon.nonce.utf8.count)
        write(beacon, to: &out)
        return out
    }

    /// The beacon in `bytes` when they are exactly in the form `encode(_: Beacon)`
    /// writes; nil otherwise (decode them with `JSONDecoder`).
    static func beacon(_ bytes: ArraySlice<UInt8>) -> Beacon? {
        var reader = HandJSON.Reader(bytes: bytes)
        guard let beacon = handshake(from: &reader), reader.atEnd else { return nil }
        return beacon
    }

    /// Writes a beacon, which is a handshake (``WireMessage/Handshake``): the form the
    /// handshake's messages carry too (``WireCodec``).
    static func write(_ beacon: Beacon, to out: inout [UInt8]) {
        out += Literal.protocolVersion
        HandJSON.integer(beacon.protocolVersion, to: &out)
        if let highest = beacon.highestProtocolVersion {
            out += Literal.highestProtocolVersion
            HandJSON.integer(highest, to: &out)
        }
        out += Literal.cluster
        HandJSON.string(beacon.cluster, to: &out)
        out += Literal.nodeName
        HandJSON.string(beacon.node.name, to: &out)
        out += Literal.incarnation
        HandJSON.number(beacon.node.incarnation, to: &out)
        out += Literal.address
        HandJSON.string(beacon.address, to: &out)
        out += Literal.slots
        HandJSON.integer(beacon.slots, to: &out)
        out += Literal.waitingSlots
        HandJSON.integer(beacon.waitingSlots, to: &out)
        out += Literal.authenticated
        HandJSON.bool(beacon.authenticated, to: &out)
        out += Literal.nonce
        HandJSON.string(beacon.nonce, to: &out)
        out.append(UInt8(ascii: "}"))
    }

    /// Reads a handshake (a beacon) in the form ``write(_:to:)`` writes, from where
    /// `reader` stands; nil at the first byte off it.
    static func handshake(from reader: inout HandJSON.Reader) -> WireMessage.Handshake? {
        guard reader.literal(Literal.protocolVersion), let lowest = reader.integer() else { return nil }
        var highest: Int?
        if reader.literal(Literal.highestProtocolVersion) {
            guard let value = reader.integer() else { return nil }
            highest = value
        }
        guard reader.literal(Literal.cluster), let cluster = reader.string(), reader.literal(Literal.nodeName), let name = reader.string(),
              reader.literal(Literal.incarnation), let incarnation = reader.number(), reader.literal(Literal.address), let address = reader.string(),
              reader.literal(Literal.slots), let slots = reader.integer(), reader.literal(Literal.waitingSlots), let waitingSlots = reader.integer(),
              reader.literal(Literal.authenticated), let authenticated = reader.bool(), reader.literal(Literal.nonce), let nonce = reader.string(),
              reader.byte(UInt8(ascii: "}"))
        else { return nil }
        var beacon = Beacon(cluster: cluster, node: NodeID(name: name, incarnation: incarnation), address: address, slots: slots,
                            waitingSlots: waitingSlots, authenticated: authenticated, nonce: nonce)
        beacon.protocolVersion = lowest
        beacon.highestProtocolVersion = highest
        return beacon
    }

    /// The JSON of `envelope`; nil when its time is not a finite number, which JSON
    /// cannot carry (`JSONEncoder` refuses it too).
    static func encode(_ envelope: BeaconAuthenticator.Envelope) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(96 + envelope.cluster.utf8.count + envelope.nonce.utf8.count + envelope.beacon.utf8.count * 5 / 4 + envelope.sealed.utf8.count)
        out += Literal.envelopeCluster
        HandJSON.string(envelope.cluster, to: &out)
        out += Literal.query
        HandJSON.bool(envelope.query, to: &out)
        out += Literal.time
        guard HandJSON.double(envelope.time, to: &out) else { return nil }
        out += Literal.nonce
        HandJSON.string(envelope.nonce, to: &out)
        out += Literal.beacon
        HandJSON.string(envelope.beacon, to: &out)
        out += Literal.sealed
        HandJSON.string(envelope.sealed, to: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// The envelope in `bytes` when they are exactly in the form `encode(_: Envelope)`
    /// writes; nil otherwise (decode them with `JSONDecoder`).
    static func envelope(_ bytes: ArraySlice<UInt8>) -> BeaconAuthenticator.Envelope? {
        var reader = HandJSON.Reader(bytes: bytes)
        guard reader.literal(Literal.envelopeCluster), let cluster = reader.string(), reader.literal(Literal.query), let query = reader.bool(),
              reader.literal(Literal.time), let time = reader.double(), reader.literal(Literal.nonce), let nonce = reader.string(),
              reader.literal(Literal.beacon), let beacon = reader.string(),
              reader.literal(Literal.sealed), let sealed = reader.string(), reader.byte(UInt8(ascii: "}")), reader.atEnd
        else { return nil }
        return BeaconAuthenticator.Envelope(cluster: cluster, query: query, time: time, nonce: nonce, beacon: beacon, sealed: sealed)
    }

    /// An open cluster's envelope in the form `encode(_:)` writes with nothing sealed: its
    /// beacon field as it came (quoted, escapes not undone), so that a receiver that read
    /// the same field from the same sender before reuses what it said
    /// (``BeaconAuthenticator``). `known`, such a field read before (a whole JSON string,
    /// quotes included), is compared in place: `isKnown` says the field is that one, byte
    /// for byte (so it ends where that one ended), found without looking for its end. Its other
    /// fields are checked as JSON but not made into values, since an open cluster's reader
    /// uses none of them (about half of a beacon's reading): its cluster and nonce are
    /// strings `envelope(_:)` would read, its time a plain number. Nil off that form or
    /// when something is sealed (read such bytes as any datagram is).
    static func clearBeaconField(_ bytes: ArraySlice<UInt8>, known: [UInt8]?) -> (beacon: ArraySlice<UInt8>, isKnown: Bool)? {
        var reader = HandJSON.Reader(bytes: bytes)
        guard reader.literal(Literal.envelopeCluster), reader.skipString(), reader.literal(Literal.query), reader.bool() != nil,
              reader.literal(Literal.time), reader.skipPlainNumber(), reader.literal(Literal.nonce), reader.skipString(),
              reader.literal(Literal.beacon)
        else { return nil }
        let start = reader.index
        let isKnown = known.map { reader.literal($0) } ?? false
        guard isKnown || reader.quotedString() != nil else { return nil }
        let beacon = bytes[start..<reader.index]
        guard reader.literal(Literal.nothingSealed), reader.atEnd else { return nil }
        return (beacon, isKnown)
    }

    /// The text of a JSON string in `quoted`, its quotes included; nil when the bytes
    /// are not exactly one string.
    static func string(quoted: ArraySlice<UInt8>) -> String? {
        var reader = HandJSON.Reader(bytes: quoted)
        guard let text = reader.string(), reader.atEnd else { return nil }
        return text
    }

    private enum Literal {
        static let protocolVersion = Array(#"{"protocolVersion":"#.utf8)
        static let highestProtocolVersion = Array(#","highestProtocolVersion":"#.utf8)
        static let cluster = Array(#","cluster":"#.utf8)
        static let nodeName = Array(#","node":{"name":"#.utf8)
        static let incarnation = Array(#","incarnation":"#.utf8)
        static let address = Array(#"},"address":"#.utf8)
        static let slots = Array(#","slots":"#.utf8)
        static let waitingSlots = Array(#","waitingSlots":"#.utf8)
        static let authenticated = Array(#","authenticated":"#.utf8)
        static let nonce = Array(#","nonce":"#.utf8)
        static let envelopeCluster = Array(#"{"cluster":"#.utf8)
        static let query = Array(#","query":"#.utf8)
        static let time = Array(#","time":"#.utf8)
        static let beacon = Array(#","beacon":"#.utf8)
        static let sealed = Array(#","sealed":"#.utf8)
        static let nothingSealed = Array(#","sealed":""}"#.utf8)
    }
}
