import Testing
@testable import SpokesCluster

/// The connection handshake without sockets: a dialler's and an acceptor's machines
/// exchange messages by hand.
@Suite struct HandshakeStateMachineTests {
    static func secret(_ letter: Character) -> HandshakeAuthentication {
        HandshakeAuthentication(secret: try! ClusterSecret(String(repeating: letter, count: 32), source: "test"))
    }

    static func handshake(_ name: String, nonce: String) -> WireMessage.Handshake {
        WireMessage.Handshake(cluster: "c", node: NodeID(name: name, incarnation: 1), address: "127.0.0.1:1", slots: 2, authenticated: true, nonce: nonce)
    }

    let hello = Self.handshake("dialler", nonce: String(repeating: "a", count: 64))
    let welcome = Self.handshake("acceptor", nonce: String(repeating: "b", count: 64))
    static let acceptAll: @Sendable (WireMessage.Handshake) -> WireMessage.Refusal? = { _ in nil }

    /// The messages `actions` send.
    static func sent(_ actions: [HandshakeStateMachine.Action]) -> [WireMessage] {
        actions.compactMap { if case .send(let message) = $0 { message } else { nil } }
    }

    static func established(_ actions: [HandshakeStateMachine.Action]) -> (peer: WireMessage.Handshake, seal: FrameSeal?, proof: WireMessage.Proof?)? {
        for case .establish(let peer, let seal, let proof) in actions { return (peer, seal, proof) }
        return nil
    }

    static func closed(_ actions: [HandshakeStateMachine.Action]) -> Rejection?? {
        for case .close(_, let rejection) in actions { return rejection }
        return nil
    }

    @Test func twoNodesWithOneSecretEstablishSealsThatOpenEachOthersFramesEachWay() throws {
        let (dialling, opening) = HandshakeStateMachine.dialling(hello, to: "acceptor:1", authentication: Self.secret("k"))
        var dialler = dialling
        var acceptor = HandshakeStateMachine.accepting(from: "dialler:1", welcome: welcome, authentication: Self.secret("k"))
        let answer = acceptor.receive(try #require(Self.sent(opening).first), refusal: Self.acceptAll)
        #expect(acceptor.welcomed && !acceptor.isEstablished)
        let done = dialler.receive(try #require(Self.sent(answer).first), refusal: Self.acceptAll)
        let mine = try #require(Self.established(done))
        #expect(mine.peer == welcome && dialler.isEstablished)
        let proof = try #require(mine.proof)
        let theirs = try #require(Self.established(acceptor.receive(.proof(proof), refusal: Self.acceptAll)))
        #expect(theirs.peer == hello && acceptor.isEstablished)
        let frame: [UInt8] = Array("a frame".utf8)
        var diallers = try #require(mine.seal)
        var acceptors = try #require(theirs.seal)
        let fromDialler = try diallers.seal(frame)
        let fromAcceptor = try acceptors.seal(frame)
        #expect(fromDialler != fromAcceptor, "one key per direction")
        #expect(acceptors.open(fromDialler) == frame, "dialler to acceptor")
        #expect(diallers.open(fromAcceptor) == frame, "acceptor to dialler")
        let later = acceptor.receive(.heartbeat(WireMessage.Heartbeat(sequence: 1)), refusal: Self.acceptAll)
        guard case .deliver(.heartbeat)? = later.first else {
            Issue.record("an established connection's message is not delivered: \(later)")
            return
        }
        _ = acceptor.connectionClosed(reason: "gone", byPeer: true)
        #expect(!acceptor.isEstablished, "a closed connection is established no more")
    }

    @Test func anotherSecretFailsTheDiallerAndTheAcceptorCountsTheHandshakeAbandoned() throws {
        let (dialling, opening) = HandshakeStateMachine.dialling(hello, to: "acceptor:1", authentication: Self.secret("j"))
        var dialler = dialling
        var acceptor = HandshakeStateMachine.accepting(from: "dialler:1", welcome: welcome, authentication: Self.secret("k"))
        let answer = acceptor.receive(try #require(Self.sent(opening).first), refusal: Self.acceptAll)
        let done = dialler.receive(try #require(Self.sent(answer).first), refusal: Self.acceptAll)
        #expect(Self.established(done) == nil && !dialler.isEstablished)
        let failure = done.compactMap { if case .fail(let error) = $0 { "\(error)" } else { nil } }.first
        #expect(failure?.contains("could not prove it holds this cluster's secret") == true, "\(done)")
        #expect(done.contains { if case .count(.authenticationFailed) = $0 { true } else { false } })
        let hungUp = acceptor.connectionClosed(reason: Connection.peerClosedReason, byPeer: true)
        #expect(hungUp.contains { if case .count(.handshakeAbandoned) = $0 { true } else { false } })
    }

    @Test func aForgedDiallerProofClosesTheConnectionAndEstablishesNothing() throws {
        var acceptor = HandshakeStateMachine.accepting(from: "dialler:1", welcome: welcome, authentication: Self.secret("k"))
        _ = acceptor.receive(.hello(hello), refusal: Self.acceptAll)
        let actions = acceptor.receive(.proof(WireMessage.Proof(tag: String(repeating: "0", count: 64))), refusal: Self.acceptAll)
        #expect(Self.closed(actions) == .some(.authenticationFailed) && Self.established(actions) == nil && !acceptor.isEstablished)
    }

    @Test func aRefusedPeerIsToldWhyAndADiallerWhoseNameIsTakenYieldsIt() throws {
        var acceptor = HandshakeStateMachine.accepting(from: "dialler:1", welcome: welcome, authentication: nil)
        let refusal = WireMessage.Refusal(reason: "the name is taken", nameTakenAt: "127.0.0.1:9")
        let refused = acceptor.receive(.hello(hello), refusal: { _ in refusal })
        #expect(refused.contains { if case .refuse(refusal, hello.node) = $0 { true } else { false } }, "\(refused)")
        #expect(Self.sent(refused).isEmpty, "no welcome")
        var (dialler, _) = HandshakeStateMachine.dialling(hello, to: "acceptor:1", authentication: nil)
        let told = dialler.receive(.refused(refusal), refusal: Self.acceptAll)
        #expect(told.contains { if case .nameTaken("127.0.0.1:9") = $0 { true } else { false } }, "\(told)")
        #expect(told.contains { if case .fail = $0 { true } else { false } } && Self.closed(told) != nil)
    }

    @Test func aDiallerRefusesAnAcceptorItCannotTalkTo() throws {
        var (dialler, _) = HandshakeStateMachine.dialling(hello, to: "acceptor:1", authentication: nil)
        let actions = dialler.receive(.welcome(WireMessage.Welcome(handshake: welcome, proof: "")), refusal: { _ in WireMessage.Refusal(reason: "another cluster") })
        #expect(Self.established(actions) == nil && actions.contains { if case .count(.handshakeRefused) = $0 { true } else { false } })
    }

    @Test func aMessageBeforeTheHandshakeIsAViolationOnEitherSide() throws {
        var acceptor = HandshakeStateMachine.accepting(from: "x:1", welcome: welcome, authentication: nil)
        #expect(Self.closed(acceptor.receive(.proof(WireMessage.Proof(tag: "")), refusal: Self.acceptAll)) == .some(.messageBeforeHandshake))
        var greeted = HandshakeStateMachine.accepting(from: "x:1", welcome: welcome, authentication: nil)
        _ = greeted.receive(.hello(hello), refusal: Self.acceptAll)
        #expect(Self.closed(greeted.receive(.hello(hello), refusal: Self.acceptAll)) == .some(.messageBeforeHandshake), "a second hello")
        var (dialler, _) = HandshakeStateMachine.dialling(hello, to: "acceptor:1", authentication: nil)
        let early = dialler.receive(.heartbeat(WireMessage.Heartbeat(sequence: 1)), refusal: Self.acceptAll)
        #expect(Self.closed(early) == .some(.messageBeforeHandshake) && early.contains { if case .fail = $0 { true } else { false } })
    }

    @Test func aHandshakeThatDoesNotFinishInTimeIsClosedAndAnEstablishedOneIsNot() throws {
        var silent = HandshakeStateMachine.accepting(from: "x:1", welcome: welcome, authentication: nil)
        #expect(Self.closed(silent.timedOut(after: 3)) == .some(.handshakeTimeout))
        var (dialler, _) = HandshakeStateMachine.dialling(hello, to: "acceptor:1", authentication: nil)
        #expect(dialler.timedOut(after: 3).contains { if case .fail = $0 { true } else { false } })
        var (done, _) = HandshakeStateMachine.dialling(hello, to: "acceptor:1", authentication: nil)
        _ = done.receive(.welcome(WireMessage.Welcome(handshake: welcome, proof: "")), refusal: Self.acceptAll)
        #expect(done.isEstablished && done.timedOut(after: 3).isEmpty)
    }
}
