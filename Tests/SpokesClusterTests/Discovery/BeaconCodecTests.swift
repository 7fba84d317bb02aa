import Foundation
import SpokesTestKit
import Testing
@testable import SpokesCluster

/// Beacons and their envelopes by hand against `Codable`, pure: what ``BeaconCodec``
/// writes, `JSONDecoder` (an earlier release) reads as the same value; what it reads is
/// what `JSONDecoder` reads; an earlier release's datagrams, open and sealed, still open
/// here and this build's open there; and anything off its form goes to `JSONDecoder`.
@Suite struct BeaconCodecTests {
    static var beacons: [Beacon] {
        var beacons: [Beacon] = []
        for (index, text) in WireCodecTests.hostileStrings.prefix(14).enumerated() {
            var beacon = Beacon(cluster: text, node: NodeID(name: text, incarnation: UInt64(index) << 50), address: index.isMultiple(of: 3) ? "" : "127.0.0.\(index):7000",
                                slots: index * 7, waitingSlots: index * 100, authenticated: index.isMultiple(of: 2), nonce: String(repeating: "ab", count: index))
            if index == 5 { beacon.highestProtocolVersion = nil }
            if index == 6 { (beacon.protocolVersion, beacon.slots, beacon.waitingSlots) = (-1, .min, .max) }
            beacons.append(beacon)
        }
        return beacons
    }

    static var envelopes: [BeaconAuthenticator.Envelope] {
        let times = [0, -0.0, 1_800_000_000.123456, 1e-7, .leastNonzeroMagnitude, 1e300, 1_764_259_200, 0.1 + 0.2]
        return beacons.enumerated().map { index, beacon in
            let body = String(decoding: BeaconCodec.encode(beacon), as: UTF8.self)
            return BeaconAuthenticator.Envelope(cluster: beacon.cluster, query: index.isMultiple(of: 2), time: times[index % times.count], nonce: beacon.nonce,
                                                beacon: index.isMultiple(of: 4) ? "" : body, sealed: index.isMultiple(of: 4) ? "c2VhbGVk/+==" : "")
        }
    }

    let secret = try! ClusterSecret("beacon-secret-long-enough", source: "test")
    let now = 1_800_000_000.5

    @Test func whatItWritesJSONDecoderReadsAsTheSameValueAndSoDoesIt() throws {
        for beacon in Self.beacons {
            let bytes = BeaconCodec.encode(beacon)
            #expect(try JSONDecoder().decode(Beacon.self, from: Data(bytes)) == beacon, "\(String(decoding: bytes, as: UTF8.self).prefix(200))")
            #expect(BeaconCodec.beacon(bytes[...]) == beacon)
        }
        for envelope in Self.envelopes {
            let bytes = try #require(BeaconCodec.encode(envelope))
            let decoded = try JSONDecoder().decode(BeaconAuthenticator.Envelope.self, from: Data(bytes))
            #expect(decoded == envelope && decoded.time.bitPattern == envelope.time.bitPattern, "\(String(decoding: bytes, as: UTF8.self).prefix(200))")
            let read = try #require(BeaconCodec.envelope(bytes[...]))
            #expect(read == envelope && read.time.bitPattern == envelope.time.bitPattern)
        }
    }

    @Test func aTimeJSONCannotCarryIsNotWritten() {
        var envelope = Self.envelopes[0]
        for time in [Double.infinity, -.infinity, .nan] {
            envelope.time = time
            #expect(BeaconCodec.encode(envelope) == nil)
        }
    }

    @Test func whatJSONEncoderWritesIsReadTheSameOrLeftToJSONDecoder() throws {
        for beacon in Self.beacons {
            let bytes = Array(try JSONEncoder().encode(beacon))
            if let read = BeaconCodec.beacon(bytes[...]) { #expect(read == beacon) }
        }
        for envelope in Self.envelopes {
            let bytes = Array(try JSONEncoder().encode(envelope))
            if let read = BeaconCodec.envelope(bytes[...]) { #expect(read == envelope) }
        }
    }

    @Test func anythingOffItsFormIsLeftToJSONDecoder() throws {
        let text = String(decoding: BeaconCodec.encode(Self.beacons[1]), as: UTF8.self)
        let envelope = String(decoding: try #require(BeaconCodec.encode(Self.envelopes[0])), as: UTF8.self)
        let offForm: [String] = [
            String(text.dropLast()), text + " ", text.replacingOccurrences(of: "\"slots\":7", with: "\"slots\":07"),
            text.replacingOccurrences(of: "\"slots\":7", with: "\"slots\":-0"), text.replacingOccurrences(of: "\"slots\":7", with: "\"slots\":7.0"),
            text.replacingOccurrences(of: "\"slots\":7", with: "\"slots\":9223372036854775808"),
            text.replacingOccurrences(of: "\"authenticated\":false", with: "\"authenticated\":0"),
            text.replacingOccurrences(of: "{\"protocolVersion\"", with: "{\"extra\":1,\"protocolVersion\""),
            envelope.replacingOccurrences(of: "\"time\":0.0", with: "\"time\":0"), envelope.replacingOccurrences(of: "\"time\":0.0", with: "\"time\":1e999"),
            envelope.replacingOccurrences(of: "\"time\":0.0", with: "\"time\":0.00"), envelope.replacingOccurrences(of: "\"time\":0.0", with: "\"time\":\"0\""),
            envelope.replacingOccurrences(of: "\"query\":true", with: "\"query\":null"), "", "{", "{}",
        ]
        #expect(envelope.contains("\"time\":0.0") && envelope.contains("\"query\":true"))
        for form in offForm {
            let bytes = Array(form.utf8)
            #expect(BeaconCodec.beacon(bytes[...]) == nil && BeaconCodec.envelope(bytes[...]) == nil, "\(form.prefix(160))")
        }
    }

    @Test func seededMutationsOfItsFormsNeverCrashAndReadOnlyWhatJSONDecoderReads() throws {
        var generator = TestGenerator(seed: 34)
        let beacons = Self.beacons.prefix(8).map { BeaconCodec.encode($0) }
        let envelopes = try Self.envelopes.prefix(8).map { try #require(BeaconCodec.encode($0)) }
        for round in 0..<2_000 {
            let isBeacon = round.isMultiple(of: 2)
            let bytes = generator.mutated(isBeacon ? beacons[round / 2 % beacons.count] : envelopes[round / 2 % envelopes.count])
            let described = String(decoding: bytes, as: UTF8.self).prefix(200)
            if isBeacon, let read = BeaconCodec.beacon(bytes[...]) {
                #expect((try? JSONDecoder().decode(Beacon.self, from: Data(bytes))) == read, "\(described)")
            }
            if !isBeacon, let read = BeaconCodec.envelope(bytes[...]) {
                let decoded = try? JSONDecoder().decode(BeaconAuthenticator.Envelope.self, from: Data(bytes))
                #expect(decoded == read && decoded?.time.bitPattern == read.time.bitPattern, "\(described)")
            }
            // Whatever the bytes, a node's authenticator answers without trapping.
            var open = BeaconAuthenticator(secret: nil)
            var sealed = BeaconAuthenticator(secret: secret)
            _ = open.open(bytes, cluster: "c", now: now)
            _ = sealed.open(bytes, cluster: "c", now: now)
        }
    }

    @Test func aSendersBeaconReadBeforeIsAcceptedOrRefusedAsAFreshReaderWould() throws {
        // After each sender's valid datagram, its seeded mutations from the same address:
        // the reader that keeps each sender's last beacon field answers exactly as one that
        // keeps nothing (a field that is not byte for byte the one kept is read afresh).
        var generator = TestGenerator(seed: 35)
        let source = SocketAddress(host: "127.0.0.9", port: 7946)
        let envelopes = try Self.envelopes.prefix(8).filter(\.sealed.isEmpty).map { try #require(BeaconCodec.encode($0)) }
        #expect(!envelopes.isEmpty)
        var keeping = BeaconAuthenticator(secret: nil)
        for round in 0..<2_000 {
            let valid = envelopes[round % envelopes.count]
            let bytes = round.isMultiple(of: 3) ? valid : generator.mutated(valid)
            var fresh = BeaconAuthenticator(secret: nil)
            #expect(keeping.open(bytes, cluster: "c", now: now, from: source) == fresh.open(bytes, cluster: "c", now: now),
                    "\(String(decoding: bytes, as: UTF8.self).prefix(200))")
        }
    }

    @Test func aQuotedStringEndsAtItsFirstQuoteNotEscaped() {
        var reader = HandJSON.Reader(bytes: Array(#""a\"b\\"c"#.utf8)[...])
        #expect(reader.quotedString().map { String(decoding: $0, as: UTF8.self) } == #""a\"b\\""#)
        #expect(reader.byte(UInt8(ascii: "c")) && reader.atEnd)
        var unended = HandJSON.Reader(bytes: Array(#""a\""#.utf8)[...])
        #expect(unended.quotedString() == nil)
        var unquoted = HandJSON.Reader(bytes: Array("a".utf8)[...])
        #expect(unquoted.quotedString() == nil)
    }

    /// A datagram as a release before the hand codec sealed it: `JSONEncoder` for the
    /// beacon and the envelope.
    func earlierReleaseDatagram(_ beacon: Beacon, secret: ClusterSecret?, nonce: String) throws -> [UInt8] {
        let body = Array(try JSONEncoder().encode(beacon))
        var envelope = BeaconAuthenticator.Envelope(cluster: beacon.cluster, query: beacon.address.isEmpty, time: now, nonce: nonce, beacon: "", sealed: "")
        if let secret {
            let keyring = KeyringStore(Keyring(primary: secret))
            envelope.sealed = Data(keyring.primary.beacons.seal(body, authenticating: BeaconAuthenticator.associated(envelope))).base64EncodedString()
        } else {
            envelope.beacon = String(decoding: body, as: UTF8.self)
        }
        return Array(try JSONEncoder().encode(envelope))
    }

    @Test func anEarlierReleasesBeaconsOpenHereOpenAndSealed() throws {
        let beacon = Beacon(cluster: "c", node: NodeID(name: "old/1", incarnation: 42), address: "127.0.0.1:7000", slots: 4, waitingSlots: 8)
        var open = BeaconAuthenticator(secret: nil)
        #expect(open.open(try earlierReleaseDatagram(beacon, secret: nil, nonce: "n1"), cluster: "c", now: now) == .accepted(beacon))
        var sealed = BeaconAuthenticator(secret: secret)
        #expect(sealed.open(try earlierReleaseDatagram(beacon, secret: secret, nonce: "n2"), cluster: "c", now: now) == .accepted(beacon))
    }

    @Test func thisBuildsBeaconsOpenAsAnEarlierReleaseOpensThem() throws {
        let beacon = Beacon(cluster: "c", node: NodeID(name: "new/\"1\"", incarnation: 43), address: "127.0.0.1:7001", slots: 2, authenticated: true)
        // Open: JSONDecoder for the envelope, then for the beacon inside it.
        let plain = BeaconAuthenticator(secret: nil).seal(beacon, now: now)
        let envelope = try JSONDecoder().decode(BeaconAuthenticator.Envelope.self, from: Data(plain))
        #expect(try JSONDecoder().decode(Beacon.self, from: Data(envelope.beacon.utf8)) == beacon)
        // Sealed: the box opens under the clear fields as JSONDecoder read them.
        let box = try JSONDecoder().decode(BeaconAuthenticator.Envelope.self, from: Data(BeaconAuthenticator(secret: secret).seal(beacon, now: now)))
        let keyring = KeyringStore(Keyring(primary: secret))
        let sealedBytes = try #require(Data(base64Encoded: box.sealed))
        let body = try #require(keyring.primary.beacons.open(sealedBytes, authenticating: BeaconAuthenticator.associated(box)))
        #expect(try JSONDecoder().decode(Beacon.self, from: Data(body)) == beacon)
    }
}
