/// The hot messages of every connection as JSON by hand, without `Codable`'s generic
/// paths (issue 33 §1: no generic metadata lookups per message): calls, replies and
/// batches of them, heartbeats and their acknowledgements, and `leave`; and the
/// handshake's `hello`, `welcome` and `proof` (once per connection, but a simulated
/// cluster's clients open many: about 2% of its time went to their `Codable`), whose
/// handshake is a beacon's form (`BeaconCodec`).
///
/// ``encode(_:)`` writes one of them as `JSONEncoder` would, but with its keys in one
/// fixed order (which any JSON reader, an earlier release's `JSONDecoder` among them,
/// reads the same), and ``decode(_:)`` reads exactly that form (and batches of it, as
/// ``WireBatch/payload(joining:)`` joins them): anything else, a peer's `JSONEncoder`
/// output (whose keys come in any order, perhaps with fields this build does not know)
/// or anything malformed, is nil, and the caller decodes it with `JSONDecoder` as
/// before, with its errors. So this is only ever a faster way to the same
/// ``WireMessage``, and the wire is the one every release speaks: `WireCodecTests`
/// checks both ways against `Codable` on hostile strings and numbers, and on seeded
/// mutations of every form.
public enum WireCodec {
    /// The JSON of `message` when it is one this codec writes; nil for every other.
    public static func encode(_ message: WireMessage) -> [UInt8]? {
        var out: [UInt8] = []
        switch message {
        case .call(let call):
            out.reserveCapacity(160 + call.target.utf8.count + call.arguments.reduce(0) { $0 + $1.utf8.count + 8 })
            out += Literal.callOpen
            HandJSON.number(call.id, to: &out)
            out += Literal.recipientNode
            HandJSON.string(call.recipient.node.name, to: &out)
            out += Literal.incarnation
            HandJSON.number(call.recipient.node.incarnation, to: &out)
            out += Literal.recipientName
            HandJSON.string(call.recipient.name, to: &out)
            out += Literal.target
            HandJSON.string(call.target, to: &out)
            out += Literal.substitutions
            HandJSON.strings(call.genericSubstitutions, to: &out)
            out += Literal.arguments
            HandJSON.strings(call.arguments, to: &out)
            out += Literal.close2
        case .reply(let reply):
            // Room for the literals, the id and the outcome's text: one allocation.
            out.reserveCapacity(96 + Self.textBytes(of: reply.outcome))
            out += Literal.replyOpen
            HandJSON.number(reply.id, to: &out)
            switch reply.outcome {
            case .value(let text):
                out += Literal.value
                HandJSON.string(text, to: &out)
                out += Literal.close4
            case .void:
                out += Literal.void
            case .error(let type, let text):
                out += Literal.errorType
                HandJSON.string(type, to: &out)
                out += Literal.errorMessage
                HandJSON.string(text, to: &out)
                out += Literal.close4
            }
        case .heartbeat(let beat):
            // Room for the literals and the longest number: one allocation.
            out.reserveCapacity(80)
            out += Literal.heartbeatOpen
            HandJSON.number(beat.sequence, to: &out)
            out += Literal.close2
        case .heartbeatAck(let beat):
            out.reserveCapacity(80)
            out += Literal.heartbeatAckOpen
            HandJSON.number(beat.sequence, to: &out)
            out += Literal.close2
        case .leave:
            out += Literal.leave
        case .hello(let handshake):
            out.reserveCapacity(224 + handshake.cluster.utf8.count + handshake.node.name.utf8.count + handshake.nonce.utf8.count)
            out += Literal.helloOpen
            BeaconCodec.write(handshake, to: &out)
            out.append(UInt8(ascii: "}"))
        case .welcome(let welcome):
            out.reserveCapacity(256 + welcome.handshake.cluster.utf8.count + welcome.handshake.node.name.utf8.count + welcome.proof.utf8.count)
            out += Literal.welcomeOpen
            BeaconCodec.write(welcome.handshake, to: &out)
            out += Literal.welcomeProof
            HandJSON.string(welcome.proof, to: &out)
            out += Literal.close2
        case .proof(let proof):
            out += Literal.proofOpen
            HandJSON.string(proof.tag, to: &out)
            out += Literal.close2
        default:
            return nil
        }
        return out
    }

    /// The message in `bytes` when it is exactly in the form ``encode(_:)`` writes; nil
    /// otherwise (decode it with `JSONDecoder`). A batch is checked as `JSONDecoder`'s
    /// path checks it (``WireBatch/check(_:)``): one it refuses is nil here, so the
    /// refusal comes from that path.
    public static func decode(_ bytes: ArraySlice<UInt8>) -> WireMessage? {
        var reader = HandJSON.Reader(bytes: bytes)
        guard let message = message(from: &reader, batchAllowed: true), reader.atEnd else { return nil }
        return message
    }

    /// The bytes of a reply outcome's strings before escaping (and an error's field names).
    private static func textBytes(of outcome: WireMessage.Reply.Outcome) -> Int {
        switch outcome {
        case .value(let text): text.utf8.count
        case .void: 0
        case .error(let type, let text): 32 + type.utf8.count + text.utf8.count
        }
    }

    /// Whether `message`, as ``decode(_:)`` read it, is within `limits`, told from its
    /// form: the violation `limits.check` finds in its bytes (the first in their order),
    /// or none (`.some(nil)`); nil for the handshake's messages, whose depth depends on
    /// what they carry (scan those). A call's or reply's form nests four containers
    /// (six in a batch), and its only arrays are a call's substitutions and arguments
    /// (and a batch's members); strings, what a frame is mostly made of, are opaque to
    /// the scan, and escaped JSON in an argument stopped its fast skip at every quote:
    /// about 5,000 instructions a frame. `WireCodecTests` holds the two to the same
    /// verdict on random frames and limits.
    public static func shapeViolation(of message: WireMessage, within limits: JSONShapeLimits) -> JSONShapeLimits.Violation?? {
        switch message {
        case .heartbeat, .heartbeatAck, .leave:
            // At most two containers (the smallest depth limit is 4) and no array.
            return .some(nil)
        case .call, .reply:
            return .some(shapeViolation(of: message, inside: 0, within: limits))
        case .batch(let members):
            // `{"type":"batch","body":[`: each member opens inside two containers, and
            // is counted as an element at its first byte, before anything in it.
            for (index, member) in members.enumerated() {
                if index + 1 > limits.maximumArrayLength { return .some(.arrayTooLong(limit: limits.maximumArrayLength)) }
                if let found = shapeViolation(of: member, inside: 2, within: limits) { return .some(found) }
            }
            return .some(nil)
        default:
            return nil
        }
    }

    /// A call or reply `open` containers deep: its deepest container (a call's recipient
    /// node, a reply's outcome case) comes before a call's arrays in its bytes.
    private static func shapeViolation(of message: WireMessage, inside open: Int, within limits: JSONShapeLimits) -> JSONShapeLimits.Violation? {
        // The message, its body, then a call's recipient and its node, or a reply's
        // outcome and its case.
        if open + 4 > limits.maximumDepth { return .tooDeep(limit: limits.maximumDepth) }
        if case .call(let call) = message,
           call.genericSubstitutions.count > limits.maximumArrayLength || call.arguments.count > limits.maximumArrayLength {
            return .arrayTooLong(limit: limits.maximumArrayLength)
        }
        return nil
    }

    private enum Literal {
        static let callOpen = Array(#"{"type":"call","body":{"id":"#.utf8)
        static let recipientNode = Array(#","recipient":{"node":{"name":"#.utf8)
        static let incarnation = Array(#","incarnation":"#.utf8)
        static let recipientName = Array(#"},"name":"#.utf8)
        static let target = Array(#"},"target":"#.utf8)
        static let substitutions = Array(#","genericSubstitutions":"#.utf8)
        static let arguments = Array(#","arguments":"#.utf8)
        static let replyOpen = Array(#"{"type":"reply","body":{"id":"#.utf8)
        static let value = Array(#","outcome":{"value":{"_0":"#.utf8)
        static let void = Array(#","outcome":{"void":{}}}}"#.utf8)
        static let errorType = Array(#","outcome":{"error":{"type":"#.utf8)
        static let errorMessage = Array(#","message":"#.utf8)
        static let batchOpen = Array(#"{"type":"batch","body":["#.utf8)
        static let heartbeatOpen = Array(#"{"type":"heartbeat","body":{"sequence":"#.utf8)
        static let heartbeatAckOpen = Array(#"{"type":"heartbeatAck","body":{"sequence":"#.utf8)
        static let leave = Array(#"{"type":"leave"}"#.utf8)
        static let helloOpen = Array(#"{"type":"hello","body":"#.utf8)
        static let welcomeOpen = Array(#"{"type":"welcome","body":{"handshake":"#.utf8)
        static let welcomeProof = Array(#","proof":"#.utf8)
        static let proofOpen = Array(#"{"type":"proof","body":{"tag":"#.utf8)
        static let close2 = Array("}}".utf8)
        static let close4 = Array("}}}}".utf8)
    }

    private static func message(from reader: inout HandJSON.Reader, batchAllowed: Bool) -> WireMessage? {
        if reader.literal(Literal.callOpen) { return call(from: &reader) }
        if reader.literal(Literal.replyOpen) { return reply(from: &reader) }
        guard batchAllowed else { return nil }
        if reader.literal(Literal.heartbeatOpen) {
            guard let sequence = reader.number(), reader.literal(Literal.close2) else { return nil }
            return .heartbeat(WireMessage.Heartbeat(sequence: sequence))
        }
        if reader.literal(Literal.heartbeatAckOpen) {
            guard let sequence = reader.number(), reader.literal(Literal.close2) else { return nil }
            return .heartbeatAck(WireMessage.Heartbeat(sequence: sequence))
        }
        if reader.literal(Literal.leave) { return .leave }
        if reader.literal(Literal.helloOpen) {
            guard let handshake = BeaconCodec.handshake(from: &reader), reader.byte(UInt8(ascii: "}")) else { return nil }
            return .hello(handshake)
        }
        if reader.literal(Literal.welcomeOpen) {
            guard let handshake = BeaconCodec.handshake(from: &reader), reader.literal(Literal.welcomeProof), let proof = reader.string(),
                  reader.literal(Literal.close2)
            else { return nil }
            return .welcome(WireMessage.Welcome(handshake: handshake, proof: proof))
        }
        if reader.literal(Literal.proofOpen) {
            guard let tag = reader.string(), reader.literal(Literal.close2) else { return nil }
            return .proof(WireMessage.Proof(tag: tag))
        }
        guard reader.literal(Literal.batchOpen) else { return nil }
        var members: [WireMessage] = []
        repeat {
            guard members.count < WireBatch.maximumCount, let member = message(from: &reader, batchAllowed: false) else { return nil }
            members.append(member)
        } while reader.byte(UInt8(ascii: ","))
        guard reader.byte(UInt8(ascii: "]")), reader.byte(UInt8(ascii: "}")) else { return nil }
        return .batch(members)
    }

    private static func call(from reader: inout HandJSON.Reader) -> WireMessage? {
        guard let id = reader.number(), reader.literal(Literal.recipientNode), let node = reader.string(), reader.literal(Literal.incarnation),
              let incarnation = reader.number(), reader.literal(Literal.recipientName), let name = reader.string(), reader.literal(Literal.target),
              let target = reader.string(), reader.literal(Literal.substitutions), let substitutions = reader.strings(), reader.literal(Literal.arguments),
              let arguments = reader.strings(), reader.literal(Literal.close2) else { return nil }
        return .call(WireMessage.Call(
            id: id, recipient: ActorID(node: NodeID(name: node, incarnation: incarnation), name: name), target: target,
            genericSubstitutions: substitutions, arguments: arguments))
    }

    private static func reply(from reader: inout HandJSON.Reader) -> WireMessage? {
        guard let id = reader.number() else { return nil }
        let outcome: WireMessage.Reply.Outcome
        if reader.literal(Literal.void) {
            outcome = .void
        } else if reader.literal(Literal.value) {
            guard let text = reader.string(), reader.literal(Literal.close4) else { return nil }
            outcome = .value(text)
        } else if reader.literal(Literal.errorType) {
            guard let type = reader.string(), reader.literal(Literal.errorMessage), let text = reader.string(), reader.literal(Literal.close4) else { return nil }
            outcome = .error(type: type, message: text)
        } else {
            return nil
        }
        return .reply(WireMessage.Reply(id: id, outcome: outcome))
    }
}
