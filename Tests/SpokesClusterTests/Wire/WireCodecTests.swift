import Foundation
import SpokesTestKit
import Testing
@testable import SpokesCluster

/// The hot messages by hand against `Codable`, pure: what ``WireCodec`` writes,
/// `JSONDecoder` reads as the same message; what it reads is what `JSONDecoder` reads;
/// and whatever is not its own form (a peer's `JSONEncoder` output, anything malformed)
/// it leaves to `JSONDecoder`.
@Suite struct WireCodecTests {
    /// Strings a peer may send: quotes, backslashes, every control character, escapes of
    /// their own, text beyond ASCII and beyond the basic plane.
    static let hostileStrings: [String] = [
        "", "plain", "\"quoted\"", "back\\slash", "\\\"", "{\"json\":[1,2,\"x\"]}", "line\nbreak\r\ttab",
        String((0..<32).map { Character(Unicode.Scalar(UInt8($0))) }), "\u{7F}del", "é漢字", "🚲 emoji \u{1F6B2}", "\u{2028}\u{2029}",
        "/slash/", "\\u0041 not an escape", String(repeating: "x", count: 3000),
    ]

    static var messages: [WireMessage] {
        let node = NodeID(name: "node-\"1\"", incarnation: .max)
        var messages: [WireMessage] = []
        for (index, text) in hostileStrings.enumerated() {
            messages.append(.call(.init(id: UInt64(index), recipient: ActorID(node: node, name: text), target: text,
                                        genericSubstitutions: index.isMultiple(of: 2) ? [] : [text, "Si"], arguments: [text, "1", text])))
            messages.append(.reply(.init(id: UInt64(index) << 40, outcome: .value(text))))
            messages.append(.reply(.init(id: 0, outcome: .error(type: text, message: text + "!"))))
        }
        messages.append(.call(.init(id: 0, recipient: ActorID(node: NodeID(name: "", incarnation: 0), name: ""), target: "",
                                    genericSubstitutions: [], arguments: [])))
        messages.append(.reply(.init(id: .max, outcome: .void)))
        messages += handshakeMessages
        for sequence: UInt64 in [0, 1, 9, 10, 1_234_567, .max] {
            messages += [.heartbeat(.init(sequence: sequence)), .heartbeatAck(.init(sequence: sequence))]
        }
        messages.append(.leave)
        return messages
    }

    /// The handshake's messages over `BeaconCodecTests`' beacons (a beacon is a
    /// handshake): hostile strings, no highest version, versions and slots at their
    /// extremes.
    static var handshakeMessages: [WireMessage] {
        BeaconCodecTests.beacons.enumerated().flatMap { index, handshake -> [WireMessage] in
            let text = hostileStrings[index % hostileStrings.count]
            return [.hello(handshake), .welcome(.init(handshake: handshake, proof: text)), .proof(.init(tag: text))]
        }
    }

    func decodedByJSONDecoder(_ bytes: [UInt8]) throws -> WireMessage {
        try JSONDecoder().decode(WireMessage.self, from: Data(bytes))
    }

    @Test func whatItWritesJSONDecoderReadsAsTheSameMessageAndSoDoesIt() throws {
        for message in Self.messages {
            let bytes = try #require(WireCodec.encode(message))
            #expect(try decodedByJSONDecoder(bytes) == message, "\(String(decoding: bytes, as: UTF8.self).prefix(200))")
            #expect(WireCodec.decode(bytes[...]) == message)
        }
        // Batches as WireBatch joins them (calls and replies only).
        let members = Array(Self.messages.prefix(10))
        let joined = WireBatch.payload(joining: try members.map { try #require(WireCodec.encode($0)) })
        #expect(WireCodec.decode(joined[...]) == .batch(members))
        #expect(try decodedByJSONDecoder(joined) == .batch(members))
    }

    @Test func onlyTheHotMessagesAndTheHandshakesAreWrittenByHand() {
        let others: [WireMessage] = [.refused(.init(reason: "no")), .unsupported(.init(reason: "no")), .batch([]), .unknown(type: "x")]
        #expect(others.allSatisfy { WireCodec.encode($0) == nil })
        #expect(Self.handshakeMessages.allSatisfy { WireCodec.encode($0) != nil })
    }

    @Test func heartbeatsLeaveAndTheHandshakesAreNotReadInsideABatch() throws {
        let reply = try #require(WireCodec.encode(.reply(.init(id: 1, outcome: .void))))
        for other in [WireMessage.heartbeat(.init(sequence: 1)), .heartbeatAck(.init(sequence: 1)), .leave] + Self.handshakeMessages.prefix(3) {
            let joined = WireBatch.payload(joining: [reply, try #require(WireCodec.encode(other))])
            #expect(WireCodec.decode(joined[...]) == nil)
            #expect(throws: DecodingError.self) { try decodedByJSONDecoder(joined) }
        }
    }

    @Test func whatAnEarlierReleaseWritesIsReadByJSONDecoderAsBefore() throws {
        // An earlier release's JSONEncoder, key order its own, and fields this build does
        // not know: not this codec's form, so JSONDecoder's, which reads them.
        let forms = [#"{"body":{"sequence":7},"type":"heartbeat"}"#, #"{"type":"heartbeatAck","body":{"sequence":7,"sent":1.5}}"#,
                     #"{"type":"leave","body":{}}"#]
        let expected: [WireMessage] = [.heartbeat(.init(sequence: 7)), .heartbeatAck(.init(sequence: 7)), .leave]
        for (form, message) in zip(forms, expected) {
            #expect(WireCodec.decode(Array(form.utf8)[...]) == nil)
            #expect(try decodedByJSONDecoder(Array(form.utf8)) == message)
        }
    }

    @Test func whatJSONEncoderWritesIsReadTheSameOrLeftToJSONDecoder() throws {
        for message in Self.messages {
            let bytes = Array(try JSONEncoder().encode(message))
            // Its keys come in any order: read the same, or not read here at all.
            if let read = WireCodec.decode(bytes[...]) { #expect(read == message) }
        }
    }

    @Test func anythingOffItsFormIsLeftToJSONDecoder() throws {
        let call = try #require(WireCodec.encode(Self.messages[3]))  // the call of "plain", id 1
        let text = String(decoding: call, as: UTF8.self)
        var offForm: [[UInt8]] = [
            Array(text.utf8.dropLast()), Array((text + " ").utf8), Array(text.replacingOccurrences(of: "\"id\":1", with: "\"id\":01").utf8),
            Array(text.replacingOccurrences(of: "\"id\":1", with: "\"id\":-1").utf8),
            Array(text.replacingOccurrences(of: "\"id\":1", with: "\"id\":18446744073709551616").utf8),
            Array(text.replacingOccurrences(of: "\"plain\"", with: "\"pl\\x\"").utf8),
            Array(text.replacingOccurrences(of: "\"plain\"", with: "\"\\ud800\"").utf8),
            Array(text.replacingOccurrences(of: "\"plain\"", with: "\"\\udc00\\ud800\"").utf8),
            Array(text.replacingOccurrences(of: "\"plain\"", with: "\"\\u12\"").utf8),
            Array(text.replacingOccurrences(of: "\"plain\"", with: "\"a\u{01}b\"").utf8),
            Array(#"{"type":"batch","body":[]}"#.utf8), Array(#"{"type":"batch","body":[\#(text),]}"#.utf8),
            Array(#"{"type":"batch","body":[{"type":"batch","body":[\#(text)]}]}"#.utf8), Array(#"{"type":"heartbeat","body":{"sequence":01}}"#.utf8),
            Array(#"{"type":"heartbeat","body":{"sequence":-1}}"#.utf8), Array(#"{"type":"heartbeatAck","body":{"sequence":1.0}}"#.utf8),
            Array(#"{"type":"heartbeat","body":{"sequence":18446744073709551616}}"#.utf8), Array(#"{"type":"leave"} "#.utf8),
            [], Array("{".utf8),
            Array(#"{"type":"proof","body":{"tag":"x"}} "#.utf8), Array(#"{"type":"proof","body":{"tag":"x","extra":1}}"#.utf8),
            Array(#"{"type":"hello","body":{}}"#.utf8), Array(#"{"type":"welcome","body":{"proof":"p","handshake":{}}}"#.utf8),
        ]
        // A welcome with its keys the other way round (JSONDecoder's to read), and a
        // hello one byte short.
        let handshake = String(decoding: BeaconCodec.encode(BeaconCodecTests.beacons[0]), as: UTF8.self)
        let swapped = Array(#"{"type":"welcome","body":{"proof":"","handshake":\#(handshake)}}"#.utf8)
        #expect(try decodedByJSONDecoder(swapped) == Self.handshakeMessages[1])
        offForm.append(swapped)
        offForm.append(Array(try #require(WireCodec.encode(Self.handshakeMessages[0])).dropLast()))
        // Invalid UTF-8 inside a string.
        offForm.append(Array(text.replacingOccurrences(of: "plain", with: "pl\u{1}in").utf8).map { $0 == 0x01 ? 0xFF : $0 })
        offForm.append(WireBatch.payload(joining: Array(repeating: call, count: WireBatch.maximumCount + 1)))
        for bytes in offForm {
            #expect(WireCodec.decode(bytes[...]) == nil, "\(String(decoding: bytes, as: UTF8.self).prefix(120))")
        }
    }

    @Test func seededMutationsOfItsFormNeverCrashAndReadOnlyWhatJSONDecoderReads() throws {
        var generator = TestGenerator(seed: 33)
        let forms = try (Self.messages.prefix(12) + Self.handshakeMessages.prefix(9) + Self.messages.suffix(5)).map { try #require(WireCodec.encode($0)) }
        for round in 0..<2_000 {
            let bytes = generator.mutated(forms[round % forms.count])
            if let read = WireCodec.decode(bytes[...]) {
                #expect((try? decodedByJSONDecoder(bytes)) == read, "\(String(decoding: bytes, as: UTF8.self).prefix(200))")
            }
        }
    }

    /// The shape told from a message's form is the scan's verdict on its bytes: random
    /// calls, replies and batches of them (hostile strings, brackets in them included;
    /// argument and member counts around the array limit) against random limits (depths
    /// from the smallest allowed, array lengths from the smallest allowed); and the
    /// handshake's messages are left to the scan.
    @Test func aMessagesShapeFromItsFormIsTheScansVerdictOnItsBytes() throws {
        var generator = TestGenerator(seed: 2911)
        func below(_ bound: Int) -> Int { Int(generator.next() % UInt64(bound)) }
        func text() -> String { Self.hostileStrings[below(Self.hostileStrings.count - 1)] + (below(3) == 0 ? "[{[" : "") }
        func member() -> WireMessage {
            switch below(4) {
            case 0: .reply(.init(id: generator.next(), outcome: .value(text())))
            case 1: .reply(.init(id: 1, outcome: below(2) == 0 ? .void : .error(type: text(), message: text())))
            default:
                .call(.init(id: generator.next(), recipient: ActorID(node: NodeID(name: text(), incarnation: generator.next()), name: text()),
                            target: text(), genericSubstitutions: (0..<below(19)).map { _ in text() }, arguments: (0..<below(20)).map { _ in text() }))
            }
        }
        var verdicts: [JSONShapeLimits.Violation?] = []
        for _ in 0..<600 {
            let message: WireMessage = below(3) == 0 ? .batch((0..<(1 + below(20))).map { _ in member() }) : member()
            let limits = JSONShapeLimits(maximumDepth: 4 + below(4), maximumArrayLength: 16 + below(4))
            let bytes: [UInt8]
            if case .batch(let members) = message {
                bytes = WireBatch.payload(joining: try members.map { try #require(WireCodec.encode($0)) })
            } else {
                bytes = try #require(WireCodec.encode(message))
            }
            let read = try #require(WireCodec.decode(bytes[...]))
            var scanned: JSONShapeLimits.Violation?
            do { try limits.check(bytes) } catch { scanned = error }
            let told = try #require(WireCodec.shapeViolation(of: read, within: limits))
            #expect(told == scanned, "\(limits) \(String(decoding: bytes, as: UTF8.self).prefix(300))")
            verdicts.append(scanned)
        }
        // Every verdict was met: the test tells them apart.
        #expect(verdicts.contains(nil) && verdicts.contains(.tooDeep(limit: 4)) && verdicts.contains { if case .arrayTooLong = $0 { true } else { false } })
        for message in Self.handshakeMessages {
            #expect(WireCodec.shapeViolation(of: message, within: JSONShapeLimits(maximumDepth: 32, maximumArrayLength: 100)) == nil)
        }
    }
}
