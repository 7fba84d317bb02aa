import SpokesTestKit
import Foundation
import Testing
@testable import SpokesCluster

/// Probe datagrams: tagged under a secret, refused without the right tag, ignored by an
/// open node, and never decoded past their size limit.
@Suite struct ProbeSealTests {
    let message = Prober.Message.ack(nonce: 99, from: NodeID(name: "a", incarnation: 1), about: NodeID(name: "b", incarnation: 2))

    @Test func aSealedProbeOpensOnlyUnderTheSameSecret() throws {
        let secret = try ClusterSecret(String(repeating: "k", count: 32), source: "test")
        let other = try ClusterSecret(String(repeating: "j", count: 32), source: "test")
        let sealed = ProbeSeal(secret: secret).seal(message)
        #expect(ProbeSeal(secret: secret).open(sealed) == .accepted(message))
        #expect(ProbeSeal(secret: other).open(sealed) == .rejected(.unauthenticatedProbe))
        #expect(ProbeSeal(secret: secret).open(ProbeSeal(secret: nil).seal(message)) == .rejected(.unauthenticatedProbe), "no tag")
        #expect(ProbeSeal(secret: nil).open(sealed) == .ignored, "an open node ignores another cluster's probes")
        #expect(ProbeSeal(secret: nil).open(ProbeSeal(secret: nil).seal(message)) == .accepted(message))
    }

    @Test func aTamperedOrMalformedOrOversizedDatagramIsRejected() throws {
        let secret = try ClusterSecret(String(repeating: "k", count: 32), source: "test")
        let seal = ProbeSeal(secret: secret)
        let sealed = seal.seal(message)
        // Quoted: base64 has no quotes, so only the message in clear could hold it.
        #expect(!sealed.contains(subsequence: Array("\"ack\"".utf8)), "who probes whom is not readable")
        // One bit of the box flipped, the envelope still well formed.
        var envelope = try #require(JSONSerialization.jsonObject(with: Data(sealed)) as? [String: String])
        var box = try #require(Data(base64Encoded: envelope["s"] ?? ""))
        box[box.count / 2] ^= 1
        envelope["s"] = box.base64EncodedString()
        let tampered = Array(try JSONSerialization.data(withJSONObject: envelope))
        #expect(seal.open(tampered) == .rejected(.unauthenticatedProbe))
        #expect(seal.open(Array("not json".utf8)) == .rejected(.malformedProbe))
        #expect(ProbeSeal(secret: nil).open(Array(#"{"m": "{\"bogus\": 1}", "s": ""}"#.utf8)) == .rejected(.malformedProbe))
        #expect(seal.open([UInt8](repeating: 32, count: ProbeSeal.maximumSize + 1)) == .rejected(.malformedProbe))
    }
}
