/// Calls, replies and batches of them as JSON by hand: the hot path of every connection,
/// without `Codable`'s generic paths (issue 33 §1: no generic metadata lookups per call).
///
/// ``encode(_:)`` writes a call or a reply as `JSONEncoder` would, but with its keys in
/// one fixed order, and ``decode(_:)`` reads exactly that form (and batches of it, as
/// ``WireBatch/payload(joining:)`` joins them): anything else, a peer's `JSONEncoder`
/// output (whose keys come in any order) or anything malformed, is nil, and the caller
/// decodes it with `JSONDecoder` as before, with its errors. So this is only ever a
/// faster way to the same ``WireMessage``: `WireCallCodecTests` checks both ways against
/// `Codable` on hostile strings and numbers.
public enum WireCallCodec {
    /// The JSON of `message` when it is a call or a reply; nil for every other message.
    public static func encode(_ message: WireMessage) -> [UInt8]? {
        var out: [UInt8] = []
        switch message {
        case .call(let call):
            out.reserveCapacity(160 + call.target.utf8.count + call.arguments.reduce(0) { $0 + $1.utf8.count + 8 })
            out += Literal.callOpen
            number(call.id, to: &out)
            out += Literal.recipientNode
            string(call.recipient.node.name, to: &out)
            out += Literal.incarnation
            number(call.recipient.node.incarnation, to: &out)
            out += Literal.recipientName
            string(call.recipient.name, to: &out)
            out += Literal.target
            string(call.target, to: &out)
            out += Literal.substitutions
            strings(call.genericSubstitutions, to: &out)
            out += Literal.arguments
            strings(call.arguments, to: &out)
            out += Literal.close2
        case .reply(let reply):
            out += Literal.replyOpen
            number(reply.id, to: &out)
            switch reply.outcome {
            case .value(let text):
                out.reserveCapacity(64 + text.utf8.count)
                out += Literal.value
                string(text, to: &out)
                out += Literal.close4
            case .void:
                out += Literal.void
            case .error(let type, let text):
                out += Literal.errorType
                string(type, to: &out)
                out += Literal.errorMessage
                string(text, to: &out)
                out += Literal.close4
            }
        default:
            return nil
        }
        return out
    }

    /// The call, reply or batch of them in `bytes` when they are exactly in the form
    /// ``encode(_:)`` writes; nil otherwise (decode them with `JSONDecoder`). A batch is
    /// checked as `JSONDecoder`'s path checks it (``WireBatch/check(_:)``): one it
    /// refuses is nil here, so the refusal comes from that path.
    public static func decode(_ bytes: ArraySlice<UInt8>) -> WireMessage? {
        var reader = Reader(bytes: bytes)
        guard let message = reader.message(batchAllowed: true), reader.atEnd else { return nil }
        return message
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
        static let close2 = Array("}}".utf8)
        static let close4 = Array("}}}}".utf8)
    }

    private static func number(_ value: UInt64, to out: inout [UInt8]) {
        guard value > 0 else { return out.append(UInt8(ascii: "0")) }
        var digits: [UInt8] = []
        var rest = value
        while rest > 0 {
            digits.append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        }
        out += digits.reversed()
    }

    private static let hex = Array("0123456789abcdef".utf8)

    /// `text` as a JSON string: quote, backslash and control characters escaped, the
    /// rest as its UTF-8.
    private static func string(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20: out += [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    private static func strings(_ texts: [String], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        for (index, text) in texts.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            string(text, to: &out)
        }
        out.append(UInt8(ascii: "]"))
    }

    /// Reads the form ``encode(_:)`` writes, byte by byte, bounds checked; every method
    /// returns nil (or false) at the first byte that does not fit it.
    private struct Reader {
        let bytes: ArraySlice<UInt8>
        var index: Int

        init(bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            index = bytes.startIndex
        }

        var atEnd: Bool { index == bytes.endIndex }

        mutating func literal(_ expected: [UInt8]) -> Bool {
            guard bytes.endIndex - index >= expected.count else { return false }
            for (offset, byte) in expected.enumerated() where bytes[index + offset] != byte { return false }
            index += expected.count
            return true
        }

        mutating func byte(_ expected: UInt8) -> Bool {
            guard index < bytes.endIndex, bytes[index] == expected else { return false }
            index += 1
            return true
        }

        mutating func message(batchAllowed: Bool) -> WireMessage? {
            if literal(Literal.callOpen) { return call() }
            if literal(Literal.replyOpen) { return reply() }
            guard batchAllowed, literal(Literal.batchOpen) else { return nil }
            var members: [WireMessage] = []
            repeat {
                guard members.count < WireBatch.maximumCount, let member = message(batchAllowed: false) else { return nil }
                members.append(member)
            } while byte(UInt8(ascii: ","))
            guard byte(UInt8(ascii: "]")), byte(UInt8(ascii: "}")) else { return nil }
            return .batch(members)
        }

        mutating func call() -> WireMessage? {
            guard let id = number(), literal(Literal.recipientNode), let node = string(), literal(Literal.incarnation),
                  let incarnation = number(), literal(Literal.recipientName), let name = string(), literal(Literal.target),
                  let target = string(), literal(Literal.substitutions), let substitutions = strings(), literal(Literal.arguments),
                  let arguments = strings(), literal(Literal.close2) else { return nil }
            return .call(WireMessage.Call(
                id: id, recipient: ActorID(node: NodeID(name: node, incarnation: incarnation), name: name), target: target,
                genericSubstitutions: substitutions, arguments: arguments))
        }

        mutating func reply() -> WireMessage? {
            guard let id = number() else { return nil }
            let outcome: WireMessage.Reply.Outcome
            if literal(Literal.void) {
                outcome = .void
            } else if literal(Literal.value) {
                guard let text = string(), literal(Literal.close4) else { return nil }
                outcome = .value(text)
            } else if literal(Literal.errorType) {
                guard let type = string(), literal(Literal.errorMessage), let text = string(), literal(Literal.close4) else { return nil }
                outcome = .error(type: type, message: text)
            } else {
                return nil
            }
            return .reply(WireMessage.Reply(id: id, outcome: outcome))
        }

        /// Digits without a leading zero (but `0`), at most `UInt64.max`.
        mutating func number() -> UInt64? {
            let start = index
            var value: UInt64 = 0
            while index < bytes.endIndex, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                let (times, overflowTimes) = value.multipliedReportingOverflow(by: 10)
                let (sum, overflowSum) = times.addingReportingOverflow(UInt64(bytes[index] - UInt8(ascii: "0")))
                guard !overflowTimes, !overflowSum else { return nil }
                value = sum
                index += 1
            }
            guard index > start, index - start == 1 || bytes[start] != UInt8(ascii: "0") else { return nil }
            return value
        }

        mutating func strings() -> [String]? {
            guard byte(UInt8(ascii: "[")) else { return nil }
            var texts: [String] = []
            if byte(UInt8(ascii: "]")) { return texts }
            repeat {
                guard let text = string() else { return nil }
                texts.append(text)
            } while byte(UInt8(ascii: ","))
            return byte(UInt8(ascii: "]")) ? texts : nil
        }

        /// A JSON string: valid UTF-8, no raw control character, escapes as JSON has
        /// them (a `\u` of a lone surrogate is nil).
        mutating func string() -> String? {
            guard byte(UInt8(ascii: "\"")) else { return nil }
            let start = index
            // Most strings hold no escape: their bytes as they are.
            while index < bytes.endIndex {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    defer { index += 1 }
                    return String(validating: bytes[start..<index], as: UTF8.self)
                }
                if byte == UInt8(ascii: "\\") { break }
                guard byte >= 0x20 else { return nil }
                index += 1
            }
            var text = Array(bytes[start..<index])
            while index < bytes.endIndex {
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return String(validating: text, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard index < bytes.endIndex else { return nil }
                    let escape = bytes[index]
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(escape)
                    case UInt8(ascii: "b"): text.append(0x08)
                    case UInt8(ascii: "f"): text.append(0x0C)
                    case UInt8(ascii: "n"): text.append(0x0A)
                    case UInt8(ascii: "r"): text.append(0x0D)
                    case UInt8(ascii: "t"): text.append(0x09)
                    case UInt8(ascii: "u"):
                        guard let unit = hex4() else { return nil }
                        var scalar = UInt32(unit)
                        if (0xD800..<0xDC00).contains(unit) {
                            guard self.byte(UInt8(ascii: "\\")), self.byte(UInt8(ascii: "u")), let low = hex4(), (0xDC00..<0xE000).contains(low) else { return nil }
                            scalar = 0x10000 + (UInt32(unit - 0xD800) << 10) + UInt32(low - 0xDC00)
                        } else if (0xDC00..<0xE000).contains(unit) {
                            return nil
                        }
                        guard let character = Unicode.Scalar(scalar) else { return nil }
                        text += Array(String(Character(character)).utf8)
                    default:
                        return nil
                    }
                case 0..<0x20:
                    return nil
                default:
                    text.append(byte)
                }
            }
            return nil
        }

        mutating func hex4() -> UInt16? {
            guard bytes.endIndex - index >= 4 else { return nil }
            var value: UInt16 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: return nil
                }
                value = value << 4 | UInt16(digit)
                index += 1
            }
            return value
        }
    }
}
