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

    @Test func eachDirectionOfASessionHasItsOwnKey() {
        let keys = HandshakeAuthentication(secret: secret).sessionKeys(hello: hello, welcome: welcome)
        let message = Array("frame".utf8)
        #expect(keys.fromDialer.authenticationCode(for: message) != keys.fromAcceptor.authenticationCode(for: message))
    }

    @Test func noncesAreFreshHex() {
        let a = HandshakeAuthentication.makeNonce()
        #expect(a.count == 2 * HandshakeAuthentication.nonceSize)
        #expect(a.allSatisfy { $0.isHexDigit })
        #expect(a != HandshakeAuthentication.makeNonce())
    }
}
