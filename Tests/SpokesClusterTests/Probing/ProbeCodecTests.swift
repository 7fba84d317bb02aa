import Foundation
import SpokesTestKit
import Testing
@testable import SpokesCluster

/// Probe datagrams by hand against `Codable`, pure: what ``ProbeCodec`` writes,
/// `JSONDecoder` (an earlier release) reads as the same value; what it reads is what
/// `JSONDecoder` reads; an earlier release's probes, open and sealed, still open here and
/// this build's open there; and anything off its form goes to `JSONDecoder`.
@Suite struct ProbeCodecTests {
    static var nodes: [NodeID] {
        WireCodecTests.hostileStrings.enumerated().map { index, text in
            NodeID(name: text, incarnation: [0, 1, 9, 10, 1_234_567, UInt64(index) << 50, .max][index % 7])
        }
    }

    /// Every kind of message over every hostile name, with nonces from 0 to the largest.
    static var messages: [Prober.Message] {
        let nodes = nodes
        let nonces: [UInt64] = [0, 1, 10, 99, 1 << 53, .max - 1, .max]
        var messages: [Prober.Message] = []
        for (index, node) in nodes.enumerated() {
            let other = nodes[(index + 3) % nodes.count]
            let nonce = nonces[index % nonces.count]
            messages += [.ping(nonce: nonce, from: node), .pingRequest(nonce: nonce, from: node, target: other), .ack(nonce: nonce, from: other, about: node)]
        }
        return messages
    }

    static let secret = try! ClusterSecret(String(repeating: "k", count: 32), source: "test")

    @Test func whatItWritesJSONDecoderReadsAsTheSameValueAndSoDoesIt() throws {
        #expect(Self.messages.count == 3 * WireCodecTests.hostileStrings.count)
        for message in Self.messages {
            let bytes = ProbeCodec.encode(message)
            #expect(try JSONDecoder().decode(Prober.Message.self, from: Data(bytes)) == message, "\(String(decoding: bytes, as: UTF8.self).prefix(200))")
            #expect(ProbeCodec.message(bytes[...]) == message)
            for (m, s) in [(String(decoding: bytes, as: UTF8.self), ""), ("", "c2VhbGVk/+==")] {
                let envelope = ProbeCodec.envelope(m: m, s: s)
                let decoded = try JSONDecoder().decode([String: String].self, from: Data(envelope))
                #expect(decoded == ["m": m, "s": s])
                let read = try #require(ProbeCodec.envelope(envelope[...]))
                #expect(read.m == m && read.s == s)
            }
        }
    }

    @Test func whatJSONEncoderWritesIsReadTheSameOrLeftToJSONDecoder() throws {
        var readByHand = 0
        for message in Self.messages {
            let bytes = Array(try JSONEncoder().encode(message))
            if let read = ProbeCodec.message(bytes[...]) {
                #expect(read == message)
                readByHand += 1
            }
        }
        // Names with a slash, which JSONEncoder escapes, or keys in another order.
        #expect(readByHand < Self.messages.count)
    }

    @Test func anythingOffItsFormIsLeftToJSONDecoder() throws {
        let ping = String(decoding: ProbeCodec.encode(.ping(nonce: 7, from: NodeID(name: "n1", incarnation: 2))), as: UTF8.self)
        let ack = String(decoding: ProbeCodec.encode(.ack(nonce: 7, from: NodeID(name: "n1", incarnation: 2), about: NodeID(name: "n2", incarnation: 3))), as: UTF8.self)
        #expect(ping == #"{"ping":{"nonce":7,"from":{"name":"n1","incarnation":2}}}"#)
        let offForm: [String] = [
            String(ping.dropLast()), ping + " ", " " + ping, ping.replacingOccurrences(of: "\"nonce\":7", with: "\"nonce\":07"),
            ping.replacingOccurrences(of: "\"nonce\":7", with: "\"nonce\":-7"), ping.replacingOccurrences(of: "\"nonce\":7", with: "\"nonce\":7.0"),
            ping.replacingOccurrences(of: "\"nonce\":7", with: "\"nonce\":18446744073709551616"),
            ping.replacingOccurrences(of: "\"incarnation\":2", with: "\"incarnation\":\"2\""),
            ping.replacingOccurrences(of: "{\"name\"", with: "{\"extra\":1,\"name\""), ping.replacingOccurrences(of: "\"ping\"", with: "\"pong\""),
            ack.replacingOccurrences(of: "\"about\"", with: "\"target\""), ack.replacingOccurrences(of: ",\"about\":{\"name\":\"n2\",\"incarnation\":3}", with: ""),
            #"{"m":"","s":""} "#, #"{"s":"","m":""}"#, #"{"m":"","s":null}"#, #"{"m":"","s":"","x":""}"#, "", "{", "{}",
        ]
        for form in offForm {
            let bytes = Array(form.utf8)
            #expect(ProbeCodec.message(bytes[...]) == nil && ProbeCodec.envelope(bytes[...]) == nil, "\(form.prefix(160))")
        }
    }

    @Test func seededMutationsOfItsFormsNeverCrashAndReadOnlyWhatJSONDecoderReads() throws {
        var generator = TestGenerator(seed: 28)
        let messages = Self.messages.prefix(24).map { ProbeCodec.encode($0) }
        let open = ProbeSeal(secret: nil)
        let sealed = ProbeSeal(secret: Self.secret)
        let datagrams = Self.messages.prefix(24).map { open.seal($0) }
        for round in 0..<3_000 {
            let isMessage = round.isMultiple(of: 2)
            let bytes = generator.mutated(isMessage ? messages[round / 2 % messages.count] : datagrams[round / 2 % datagrams.count])
            let described = String(decoding: bytes, as: UTF8.self).prefix(200)
            if isMessage, let read = ProbeCodec.message(bytes[...]) {
                #expect((try? JSONDecoder().decode(Prober.Message.self, from: Data(bytes))) == read, "\(described)")
            }
            if !isMessage, let read = ProbeCodec.envelope(bytes[...]) {
                let decoded = try? JSONDecoder().decode([String: String].self, from: Data(bytes))
                #expect(decoded == ["m": read.m, "s": read.s], "\(described)")
            }
            // Whatever the bytes, a node opens them without trapping, as it did with the
            // Codable path alone.
            #expect(open.open(bytes) == Self.openedAsAnEarlierRelease(bytes, secret: nil), "\(described)")
            _ = sealed.open(bytes)
        }
    }

    /// What a release before the hand codec made of `datagram` (`JSONDecoder` for the
    /// envelope and the message).
    static func openedAsAnEarlierRelease(_ datagram: [UInt8], secret: ClusterSecret?) -> ProbeSeal.Outcome {
        struct Envelope: Codable {
            var m: String
            var s: String
        }
        guard datagram.count <= ProbeSeal.maximumSize, let envelope = try? JSONDecoder().decode(Envelope.self, from: Data(datagram)) else {
            return .rejected(.malformedProbe)
        }
        let body: [UInt8]
        if let secret {
            guard let box = Data(base64Encoded: envelope.s), let opened = KeyringStore(Keyring(primary: secret)).primary.probes.open(box) else {
                return .rejected(.unauthenticatedProbe)
            }
            body = opened
        } else if !envelope.s.isEmpty {
            return .ignored
        } else {
            body = Array(envelope.m.utf8)
        }
        guard let message = try? JSONDecoder().decode(Prober.Message.self, from: Data(body)) else { return .rejected(.malformedProbe) }
        return .accepted(message)
    }

    /// A probe as a release before the hand codec sealed it: `JSONEncoder` for the
    /// message and the envelope.
    static func earlierReleaseDatagram(_ message: Prober.Message, secret: ClusterSecret?) throws -> [UInt8] {
        let body = Array(try JSONEncoder().encode(message))
        let envelope: [String: String]
        if let secret {
            envelope = ["m": "", "s": Data(KeyringStore(Keyring(primary: secret)).primary.probes.seal(body)).base64EncodedString()]
        } else {
            envelope = ["m": String(decoding: body, as: UTF8.self), "s": ""]
        }
        return Array(try JSONEncoder().encode(envelope))
    }

    /// What a node makes of a datagram carrying `message`: the message, unless the
    /// datagram is longer than a probe may be (the longest hostile names).
    static func expected(_ datagram: [UInt8], _ message: Prober.Message) -> ProbeSeal.Outcome {
        datagram.count <= ProbeSeal.maximumSize ? .accepted(message) : .rejected(.malformedProbe)
    }

    @Test func anEarlierReleasesProbesOpenHereOpenAndSealed() throws {
        var accepted = 0
        for message in Self.messages {
            for secret in [nil, Self.secret] {
                let datagram = try Self.earlierReleaseDatagram(message, secret: secret)
                let outcome = ProbeSeal(secret: secret).open(datagram)
                #expect(outcome == Self.expected(datagram, message))
                if outcome == .accepted(message) { accepted += 1 }
            }
        }
        #expect(accepted > Self.messages.count)
    }

    @Test func thisBuildsProbesOpenAsAnEarlierReleaseOpensThem() throws {
        var accepted = 0
        for message in Self.messages {
            for secret in [nil, Self.secret] {
                let datagram = ProbeSeal(secret: secret).seal(message)
                let outcome = Self.openedAsAnEarlierRelease(datagram, secret: secret)
                #expect(outcome == Self.expected(datagram, message))
                #expect(ProbeSeal(secret: secret).open(datagram) == outcome)
                if outcome == .accepted(message) { accepted += 1 }
            }
        }
        #expect(accepted > Self.messages.count)
    }
}
