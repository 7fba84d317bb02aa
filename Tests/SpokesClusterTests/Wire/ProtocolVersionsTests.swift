import Foundation
import Testing
@testable import SpokesCluster

/// The negotiation of protocol versions, pure: agreement per connection, the version a
/// cluster may use, the refusals' words, and the wire form a release of protocol 3 (commit
/// 3795d1f, which compares `protocolVersion` for equality) still reads.
@Suite struct ProtocolVersionsTests {
    let three = ProtocolVersions.only(3)
    let threeToFour = ProtocolVersions(lowest: 3, highest: 4)
    let fourToFive = ProtocolVersions(lowest: 4, highest: 5)

    @Test func thisBuildSpeaksItsOwnVersionAndTheOneBefore() {
        #expect(ProtocolVersions.current == ProtocolVersions(lowest: 3, highest: 7))
        #expect(ProtocolVersions.current.highest - ProtocolVersions.current.lowest >= 1)
        #expect(WireMessage.protocolVersion == 7)
        #expect(ProtocolVersions.current.description == "3 to 7" && three.description == "3")
    }

    @Test func twoPeersAgreeOnTheHighestVersionBothSpeak() {
        #expect(threeToFour.agreed(with: threeToFour) == 4)
        #expect(threeToFour.agreed(with: three) == 3)
        #expect(three.agreed(with: threeToFour) == 3, "the same from either side")
        #expect(threeToFour.agreed(with: fourToFive) == 4)
        #expect(fourToFive.agreed(with: threeToFour) == 4)
        #expect(three.agreed(with: fourToFive) == nil, "two releases apart")
        #expect(fourToFive.agreed(with: three) == nil)
    }

    @Test func theClusterUsesTheHighestVersionEveryMemberSpeaks() {
        #expect(ProtocolVersions.common([threeToFour, threeToFour, threeToFour]) == 4)
        #expect(ProtocolVersions.common([threeToFour, three, threeToFour]) == 3, "one member not upgraded holds it at 3")
        #expect(ProtocolVersions.common([threeToFour, fourToFive]) == 4)
        #expect(ProtocolVersions.common([three, fourToFive]) == nil)
        #expect(ProtocolVersions.common([ProtocolVersions]()) == nil)
        // A rolling upgrade of five nodes: the cluster's version rises with the last one.
        var nodes = Array(repeating: three, count: 5)
        for index in nodes.indices {
            nodes[index] = threeToFour
            #expect(ProtocolVersions.common(nodes) == (index == 4 ? 4 : 3), "after \(index + 1) upgraded")
        }
    }

    @Test func aRefusalNamesBothRangesAndWhatToDo() throws {
        let tooOld = try #require(threeToFour.refusal(of: .only(2), peer: "node old", local: "node n1"))
        #expect(tooOld.contains("node old speaks protocol 2 and node n1 speaks 3 to 4"), "\(tooOld)")
        #expect(tooOld.contains("upgrade node old to a release that speaks 3"), "\(tooOld)")
        #expect(tooOld.contains("or run node n1 on a release that still speaks 2"), "\(tooOld)")
        let tooNew = try #require(threeToFour.refusal(of: ProtocolVersions(lowest: 5, highest: 6), peer: "node new", local: "node n1"))
        #expect(tooNew.contains("node new speaks protocol 5 to 6 and node n1 speaks 3 to 4"), "\(tooNew)")
        #expect(tooNew.contains("upgrade node n1 to a release that speaks 5"), "\(tooNew)")
        #expect(tooNew.contains("or run node new on a release that still speaks 4"), "\(tooNew)")
        #expect(threeToFour.refusal(of: three, peer: "a", local: "b") == nil)
        #expect(threeToFour.refusal(of: fourToFive, peer: "a", local: "b") == nil)
    }

    @Test func aHandshakeCarriesItsRangeAsTheLowestVersionAndAnOptionalHighest() throws {
        let node = NodeID(name: "a", incarnation: 1)
        let current = WireMessage.Handshake(cluster: "c", node: node, address: "127.0.0.1:1", slots: 1)
        #expect(current.protocolVersion == 3 && current.highestProtocolVersion == 7 && current.protocolVersions == .current)
        let text = String(decoding: try JSONEncoder().encode(current), as: UTF8.self)
        #expect(text.contains(#""protocolVersion":3"#) && text.contains(#""highestProtocolVersion":7"#), "\(text)")
        // A node that speaks only 3 sends what a release of protocol 3 sends: no range.
        let old = WireMessage.Handshake(protocolVersions: three, cluster: "c", node: node, address: "127.0.0.1:1", slots: 1)
        #expect(old.highestProtocolVersion == nil)
        #expect(!String(decoding: try JSONEncoder().encode(old), as: UTF8.self).contains("highestProtocolVersion"))
        // What a release of protocol 3 sends decodes, as 3 alone.
        let fromOld = #"{"protocolVersion":3,"cluster":"c","node":{"name":"a","incarnation":1},"address":"","slots":0,"waitingSlots":0,"authenticated":false,"nonce":""}"#
        let decoded = try JSONDecoder().decode(WireMessage.Handshake.self, from: Data(fromOld.utf8))
        #expect(decoded.protocolVersions == three)
    }

    /// Commit 3795d1f's handshake, field for field: what its synthesized decoder reads.
    struct ReleaseThreeHandshake: Codable, Equatable {
        var protocolVersion: Int
        var cluster: String
        var node: NodeID
        var address: String
        var slots: Int
        var waitingSlots: Int
        var authenticated: Bool
        var nonce: String
    }

    @Test func aReleaseOfProtocolThreeReadsThisBuildsHelloAsProtocolThree() throws {
        let hello = WireMessage.hello(.init(cluster: "c", node: NodeID(name: "a", incarnation: 1), address: "127.0.0.1:1", slots: 2, nonce: "ab"))
        let object = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(hello)) as? [String: Any])
        let body = try JSONSerialization.data(withJSONObject: try #require(object["body"]))
        let read = try JSONDecoder().decode(ReleaseThreeHandshake.self, from: body)
        #expect(read.protocolVersion == 3, "the version it compares for equality")
        #expect(read.slots == 2 && read.nonce == "ab")
    }

    @Test func theRangesEnterTheProofsOnlyWhenBothSidesSentOne() throws {
        let authentication = HandshakeAuthentication(secret: try ClusterSecret("correct horse battery staple", source: "test"))
        func handshake(_ name: String, _ versions: ProtocolVersions) -> WireMessage.Handshake {
            WireMessage.Handshake(protocolVersions: versions, cluster: "c", node: NodeID(name: name, incarnation: 1), address: "127.0.0.1:1",
                                  slots: 1, authenticated: true, nonce: HandshakeAuthentication.makeNonce())
        }
        // A release of protocol 3 dials this build: it proves the welcome as it decoded it,
        // without the range; this build's proof over the welcome with its range is the same.
        let oldHello = handshake("old", three)
        let newWelcome = handshake("new", threeToFour)
        var welcomeAsOldReadsIt = newWelcome
        welcomeAsOldReadsIt.highestProtocolVersion = nil
        #expect(authentication.acceptorProof(hello: oldHello, welcome: newWelcome) == authentication.acceptorProof(hello: oldHello, welcome: welcomeAsOldReadsIt))
        #expect(authentication.isValidDialerProof(authentication.dialerProof(hello: oldHello, welcome: welcomeAsOldReadsIt), hello: oldHello, welcome: newWelcome))
        // This build dials a release of protocol 3: the same the other way.
        let newHello = handshake("new", threeToFour)
        let oldWelcome = handshake("old", three)
        var helloAsOldReadsIt = newHello
        helloAsOldReadsIt.highestProtocolVersion = nil
        #expect(authentication.acceptorProof(hello: helloAsOldReadsIt, welcome: oldWelcome) == authentication.acceptorProof(hello: newHello, welcome: oldWelcome))
        // Two speakers of 4: both ranges are bound, so a changed range fails the proof.
        let otherWelcome = handshake("other", threeToFour)
        var lowered = otherWelcome
        lowered.highestProtocolVersion = 3
        #expect(!authentication.isValidAcceptorProof(authentication.acceptorProof(hello: newHello, welcome: otherWelcome), hello: newHello, welcome: lowered))
    }

    @Test func aRangeUpsideDownOrBelowOneIsOutOfRange() {
        var handshake = WireMessage.Handshake(cluster: "c", node: NodeID(name: "a", incarnation: 1), address: "", slots: 0)
        handshake.highestProtocolVersion = 2
        #expect(throws: OutOfRange.self) { try handshake.checkRanges() }
        handshake.highestProtocolVersion = nil
        handshake.protocolVersion = 0
        #expect(throws: OutOfRange.self) { try handshake.checkRanges() }
        handshake.protocolVersion = 3
        handshake.highestProtocolVersion = Int.max
        #expect(throws: Never.self) { try handshake.checkRanges() }
        #expect(handshake.protocolVersions.agreed(with: .current) == 7)
    }
}
