import SpokesTestKit
import Testing
@testable import SpokesCluster

@Suite struct HandshakeAuthenticationTests {
    let secret = try! ClusterSecret("correct horse battery staple", source: "test")
    let hello = WireMessage.Handshake(cluster: "c", node: NodeID(name: "a", incarnation: 1), address: "127.0.0.1:1", slots: 4,
                                      authenticated: true, nonce: HandshakeAuthentication.makeNonce())
    let welcome = WireMessage.Handshake(cluster: "c", node: NodeID(name: "b", incarnation: 2), address: "127.0.0.1:2", slots: 4,
                                        authenticated: true, nonce: HandshakeAuthentication.makeNonce())

    @Test func bothProofsCheckOutWithTheSameSecret() {
        let mine = HandshakeAuthentication(secret: secret)
        let theirs = HandshakeAuthentication(secret: try! ClusterSecret("correct horse battery staple\n", source: "file"))
        #expect(theirs.isValidAcceptorProof(mine.acceptorProof(hello: hello, welcome: welcome), hello: hello, welcome: welcome))
        #expect(theirs.isValidDialerProof(mine.dialerProof(hello: hello, welcome: welcome), hello: hello, welcome: welcome))
    }

    @Test func aProofFromAnotherSecretFails() throws {
        let mine = HandshakeAuthentication(secret: secret)
        let stranger = HandshakeAuthentication(secret: try ClusterSecret("incorrect horse battery staple", source: "test"))
        #expect(!mine.isValidDialerProof(stranger.dialerProof(hello: hello, welcome: welcome), hello: hello, welcome: welcome))
        #expect(!mine.isValidAcceptorProof(stranger.acceptorProof(hello: hello, welcome: welcome), hello: hello, welcome: welcome))
        #expect(!mine.isValidDialerProof("", hello: hello, welcome: welcome))
    }

    @Test func theAcceptorsProofNeverPassesAsTheDiallers() {
        let authentication = HandshakeAuthentication(secret: secret)
        let acceptorProof = authentication.acceptorProof(hello: hello, welcome: welcome)
        #expect(!authentication.isValidDialerProof(acceptorProof, hello: hello, welcome: welcome))
    }

    @Test func aProofDoesNotCarryOverToAnotherConnectionOrATamperedHandshake() {
        let authentication = HandshakeAuthentication(secret: secret)
        let proof = authentication.dialerProof(hello: hello, welcome: welcome)
        var freshWelcome = welcome
        freshWelcome.nonce = HandshakeAuthentication.makeNonce()
        #expect(!authentication.isValidDialerProof(proof, hello: hello, welcome: freshWelcome), "replayed into another connection")
        var tampered = hello
        tampered.address = "198.51.100.7:1"
        #expect(!authentication.isValidDialerProof(proof, hello: tampered, welcome: welcome), "address changed on the way")
    }

    @Test func aSessionsFramesOpenOnlyAtTheOtherEndOfTheSameSession() throws {
        let authentication = HandshakeAuthentication(secret: secret)
        var dialer = authentication.frameSeal(hello: hello, welcome: welcome, role: .dialer)
        var acceptor = authentication.frameSeal(hello: hello, welcome: welcome, role: .acceptor)
        let frame = try dialer.seal(Array("frame".utf8))
        #expect(!frame.contains(subsequence: Array("frame".utf8)), "the payload is not readable on the wire")
        var reflected = authentication.frameSeal(hello: hello, welcome: welcome, role: .dialer)
        #expect(reflected.open(frame) == nil, "a frame sent back to its sender does not open")
        var freshWelcome = welcome
        freshWelcome.nonce = HandshakeAuthentication.makeNonce()
        var otherSession = authentication.frameSeal(hello: hello, welcome: freshWelcome, role: .acceptor)
        #expect(otherSession.open(frame) == nil, "nor in another session")
        var tampered = welcome
        tampered.slots += 1
        var tamperedSession = authentication.frameSeal(hello: hello, welcome: tampered, role: .acceptor)
        #expect(tamperedSession.open(frame) == nil, "nor where the handshake was altered on the way")
        #expect(acceptor.open(frame) == Array("frame".utf8))
    }

    @Test func noncesAreFreshHex() {
        let a = HandshakeAuthentication.makeNonce()
        #expect(a.count == 2 * HandshakeAuthentication.nonceSize)
        #expect(a.allSatisfy { $0.isHexDigit })
        #expect(a != HandshakeAuthentication.makeNonce())
    }
}
