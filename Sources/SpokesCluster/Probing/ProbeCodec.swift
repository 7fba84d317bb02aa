/// Probe datagrams (``ProbeSeal``) as JSON by hand, as ``BeaconCodec`` writes beacons:
/// every node probes its silent members and answers their probes, and the simulator opens
/// every probe it delivers (`NodesFailureDetection`), so `JSONEncoder` and `JSONDecoder`
/// of these small messages were a measurable share of a simulated cluster's time.
///
/// A ``Prober/Message`` and the envelope around it are written with their keys in one
/// fixed order, the order they are declared in (one of those `JSONEncoder` writes):
/// `{"ping":{"nonce":1,"from":{"name":"n1","incarnation":2}}}`, `pingRequest` and `ack`
/// likewise with `target` or `about` after `from`; the envelope `{"m":"…","s":"…"}`. Every
/// release's `JSONDecoder` reads these bytes as the same values. What is read back by
/// hand is exactly that form; anything else (an earlier release's datagram, whose keys
/// come in whatever order its `JSONEncoder` put them, or anything malformed) reads as nil
/// here and goes to `JSONDecoder` as before. `ProbeCodecTests` checks both ways against
/// `Codable`, over many values and seeded mutations.
enum ProbeCodec {
    /// The JSON of `message`.
    static func encode(_ message: Prober.Message) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(160)
        switch message {
        case .ping(let nonce, let from): fields(Literal.ping, nonce, from, then: nil, to: &out)
        case .pingRequest(let nonce, let from, let target): fields(Literal.pingRequest, nonce, from, then: (Literal.target, target), to: &out)
        case .ack(let nonce, let from, let about): fields(Literal.ack, nonce, from, then: (Literal.about, about), to: &out)
        }
        return out
    }

    /// A message of the kind `opening` names: its nonce, `from`, and the node of a
    /// second key when it has one.
    private static func fields(_ opening: [UInt8], _ nonce: UInt64, _ from: NodeID, then second: (key: [UInt8], node: NodeID)?, to out: inout [UInt8]) {
        out += opening
        HandJSON.number(nonce, to: &out)
        out += Literal.from
        node(from, to: &out)
        if let second {
            out += second.key
            node(second.node, to: &out)
        }
        out += Literal.end
    }

    /// The message in `bytes` when they are exactly in the form `encode(_:)` writes; nil
    /// otherwise (decode them with `JSONDecoder`).
    static func message(_ bytes: ArraySlice<UInt8>) -> Prober.Message? {
        var reader = HandJSON.Reader(bytes: bytes)
        let message: Prober.Message
        if reader.literal(Literal.ping) {
            guard let nonce = reader.number(), reader.literal(Literal.from), let from = node(&reader) else { return nil }
            message = .ping(nonce: nonce, from: from)
        } else {
            let isRequest = reader.literal(Literal.pingRequest)
            guard isRequest || reader.literal(Literal.ack), let nonce = reader.number(), reader.literal(Literal.from), let from = node(&reader),
                  reader.literal(isRequest ? Literal.target : Literal.about), let second = node(&reader)
            else { return nil }
            message = isRequest ? .pingRequest(nonce: nonce, from: from, target: second) : .ack(nonce: nonce, from: from, about: second)
        }
        guard reader.literal(Literal.end), reader.atEnd else { return nil }
        return message
    }

    /// The envelope's JSON: `m`, the message in clear, and `s`, the sealed box in base64
    /// (one of them empty, see ``ProbeSeal``).
    static func envelope(m: String, s: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(16 + m.utf8.count * 5 / 4 + s.utf8.count)
        out += Literal.envelopeM
        HandJSON.string(m, to: &out)
        out += Literal.envelopeS
        HandJSON.string(s, to: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// The envelope in `bytes` when they are exactly in the form `envelope(m:s:)` writes;
    /// nil otherwise (decode them with `JSONDecoder`).
    static func envelope(_ bytes: ArraySlice<UInt8>) -> (m: String, s: String)? {
        var reader = HandJSON.Reader(bytes: bytes)
        guard reader.literal(Literal.envelopeM), let m = reader.string(), reader.literal(Literal.envelopeS), let s = reader.string(),
              reader.byte(UInt8(ascii: "}")), reader.atEnd
        else { return nil }
        return (m, s)
    }

    private static func node(_ node: NodeID, to out: inout [UInt8]) {
        out += Literal.nodeName
        HandJSON.string(node.name, to: &out)
        out += Literal.incarnation
        HandJSON.number(node.incarnation, to: &out)
        out.append(UInt8(ascii: "}"))
    }

    private static func node(_ reader: inout HandJSON.Reader) -> NodeID? {
        guard reader.literal(Literal.nodeName), let name = reader.string(), reader.literal(Literal.incarnation), let incarnation = reader.number(),
              reader.byte(UInt8(ascii: "}"))
        else { return nil }
        return NodeID(name: name, incarnation: incarnation)
    }

    private enum Literal {
        static let ping = Array(#"{"ping":{"nonce":"#.utf8)
        static let pingRequest = Array(#"{"pingRequest":{"nonce":"#.utf8)
        static let ack = Array(#"{"ack":{"nonce":"#.utf8)
        static let from = Array(#","from":"#.utf8)
        static let target = Array(#","target":"#.utf8)
        static let about = Array(#","about":"#.utf8)
        static let nodeName = Array(#"{"name":"#.utf8)
        static let incarnation = Array(#","incarnation":"#.utf8)
        static let end = Array("}}".utf8)
        static let envelopeM = Array(#"{"m":"#.utf8)
        static let envelopeS = Array(#","s":"#.utf8)
    }
}
