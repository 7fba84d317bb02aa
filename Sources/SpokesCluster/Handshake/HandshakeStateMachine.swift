/// One connection's handshake as a pure state machine (issue 18 §1): the messages that
/// arrive go in, what the connection should do comes out (send, establish the session
/// keys and register the peer, refuse, close with a reason). ``ClusterSystem`` is its
/// shell: it owns the socket, the timer and the table of peers, and carries the actions
/// out in order. Nonces come in with the handshakes the shell makes; whether a peer is
/// acceptable (its cluster, version, name, secret) is the shell's judgement, passed in
/// with each message, because it depends on the peers connected now.
///
/// The exchange (SECURITY.md; the proofs are ``HandshakeAuthentication``'s):
/// - the dialler sends `hello` and awaits a `welcome` (or a `refused`);
/// - the acceptor awaits a `hello`, answers `welcome` with its proof, or `refused` and
///   closes, then awaits the dialler's `proof`;
/// - the dialler checks the acceptor's proof and the acceptor's handshake, sends its own
///   proof and is established; the acceptor checks that proof and is established.
/// Anything else before that closes the connection as a protocol violation; a connection
/// that does not finish within the handshake timeout is closed. Once established, every
/// message is the shell's (`deliver`).
struct HandshakeStateMachine: Sendable {
    enum Role: Sendable {
        case dialler
        case acceptor
    }

    enum State: Sendable {
        /// The dialler sent `hello`.
        case awaitingWelcome(hello: WireMessage.Handshake)
        /// The acceptor waits for the dialler's `hello`.
        case awaitingHello
        /// The acceptor sent `welcome`.
        case awaitingProof(hello: WireMessage.Handshake, welcome: WireMessage.Handshake)
        case established(peer: WireMessage.Handshake)
        case closed
    }

    /// What the connection should do, in order.
    enum Action: Sendable {
        case send(WireMessage)
        /// Send `refused` to `peer`, then close (the dialler reads why before the connection goes).
        case refuse(WireMessage.Refusal, peer: NodeID)
        /// The handshake holds: take `peer` as the connection's peer, open frames with
        /// `seal` from now on, send `proof` (the dialler's; unsealed, it is the last such
        /// frame), then seal every frame with `seal`, and register the peer. No seal
        /// without a secret.
        case establish(peer: WireMessage.Handshake, seal: FrameSeal?, proof: WireMessage.Proof?)
        /// Close; `rejection` is counted when set.
        case close(reason: String, rejection: Rejection?)
        /// Count a rejection without closing by it (the close follows).
        case count(Rejection)
        /// The dialler's join fails with this error.
        case fail(RemoteCallError)
        /// A live member holds this node's name, at `address`: the dialler yields it.
        case nameTaken(address: String)
        /// A message on the established connection, for the shell.
        case deliver(WireMessage)
    }

    let role: Role
    private(set) var state: State {
        didSet {
            if case .established = state { isEstablished = true } else { isEstablished = false }
        }
    }
    private var authentication: HandshakeAuthentication?
    /// The peer's address, for messages.
    private let address: String
    /// Our own handshake as acceptor (with its fresh nonce).
    private let welcome: WireMessage.Handshake?

    /// A dialler's handshake: `hello` (with a fresh nonce) is sent at once (the first action).
    static func dialling(
        _ hello: WireMessage.Handshake, to address: String, authentication: HandshakeAuthentication?
    ) -> (HandshakeStateMachine, [Action]) {
        let machine = HandshakeStateMachine(role: .dialler, state: .awaitingWelcome(hello: hello), authentication: authentication, address: address, welcome: nil)
        return (machine, [.send(.hello(hello))])
    }

    /// An acceptor's handshake, answering with `welcome` (our handshake, with a fresh nonce).
    static func accepting(from address: String, welcome: WireMessage.Handshake, authentication: HandshakeAuthentication?) -> HandshakeStateMachine {
        HandshakeStateMachine(role: .acceptor, state: .awaitingHello, authentication: authentication, address: address, welcome: welcome)
    }

    /// An acceptor whose node holds several secrets (a rotation under way) proves itself
    /// and checks the dialler with the one the hello was sealed with: call before the
    /// hello is received; nothing changes after it.
    mutating func authenticate(with secret: HandshakeAuthentication) {
        guard case .awaitingHello = state, authentication != nil else { return }
        authentication = secret
    }

    /// Whether the handshake ended in a connection: every message now is delivered
    /// (``receive(_:refusal:)`` says `.deliver`), which a shell may do without asking.
    /// Kept as ``state`` changes (no machine starts established), not matched against it:
    /// the shell asks it of every message on the connection, and matching copied the
    /// whole state, the peer's handshake with it, each time.
    private(set) var isEstablished = false

    /// Whether the acceptor had welcomed the dialler (its proof was still due).
    var welcomed: Bool {
        if case .awaitingProof = state { return true }
        return false
    }

    /// A message arrived. `refusal` judges a peer's handshake (nil: acceptable).
    mutating func receive(_ message: WireMessage, refusal: (WireMessage.Handshake) -> WireMessage.Refusal?) -> [Action] {
        // Every message after the handshake: decided before the pair below is made (a
        // copy of both, per message).
        if case .established = state { return [.deliver(message)] }
        switch (state, message) {
        case (.established, _):
            return [.deliver(message)]
        case (.closed, _):
            return []
        case (.awaitingWelcome(let hello), .welcome(let welcome)):
            return welcomed(hello: hello, welcome: welcome, refusal: refusal)
        case (.awaitingWelcome, .refused(let refused)):
            state = .closed
            var actions: [Action] = refused.nameTakenAt.map { [.nameTaken(address: $0)] } ?? []
            actions += [.fail(.unreachable(node: address, reason: "refused: \(refused.reason)")),
                        .close(reason: "refused by peer: \(refused.reason)", rejection: nil)]
            return actions
        case (.awaitingHello, .hello(let hello)):
            guard let welcome else { return violation(message) }
            if let refused = refusal(hello) {
                state = .closed
                return [.count(.handshakeRefused), .refuse(refused, peer: hello.node)]
            }
            state = .awaitingProof(hello: hello, welcome: welcome)
            let proof = authentication?.acceptorProof(hello: hello, welcome: welcome) ?? ""
            return [.send(.welcome(WireMessage.Welcome(handshake: welcome, proof: proof)))]
        case (.awaitingProof(let hello, let welcome), .proof(let proof)):
            var seal: FrameSeal?
            if let authentication {
                guard authentication.isValidDialerProof(proof.tag, hello: hello, welcome: welcome) else {
                    state = .closed
                    return [.close(reason: "authentication failed: its proof does not match this cluster's secret", rejection: .authenticationFailed)]
                }
                seal = authentication.frameSeal(hello: hello, welcome: welcome, role: .acceptor)
            }
            state = .established(peer: hello)
            return [.establish(peer: hello, seal: seal, proof: nil)]
        default:
            return violation(message)
        }
    }

    /// The handshake timeout passed.
    mutating func timedOut(after seconds: Double) -> [Action] {
        switch state {
        case .established, .closed:
            return []
        case .awaitingWelcome:
            state = .closed
            return [.fail(.unreachable(node: address, reason: "no handshake within \(seconds) s")),
                    .close(reason: "handshake failed: no handshake within \(seconds) s", rejection: nil)]
        case .awaitingHello, .awaitingProof:
            state = .closed
            return [.close(reason: "no handshake within \(seconds) s", rejection: .handshakeTimeout)]
        }
    }

    /// The connection closed before the handshake ended: the dialler's join fails with
    /// the reason; an acceptor whose dialler hung up after our welcome counts an abandoned
    /// handshake (most likely: the dialler could not check our proof, another secret).
    mutating func connectionClosed(reason: String, byPeer: Bool) -> [Action] {
        let before = state
        state = .closed
        switch before {
        case .awaitingWelcome:
            return [.fail(.unreachable(node: address, reason: reason))]
        case .awaitingProof where byPeer:
            return [.count(.handshakeAbandoned)]
        default:
            return []
        }
    }

    /// The dialler's side of a welcome: the acceptor's handshake must be acceptable and
    /// its proof valid; then our proof goes out and the session keys take over.
    private mutating func welcomed(
        hello: WireMessage.Handshake, welcome: WireMessage.Welcome, refusal: (WireMessage.Handshake) -> WireMessage.Refusal?
    ) -> [Action] {
        let peer = welcome.handshake
        if let refused = refusal(peer) {
            state = .closed
            return [.count(.handshakeRefused), .fail(.unreachable(node: address, reason: refused.reason)),
                    .close(reason: "handshake failed: \(refused.reason)", rejection: nil)]
        }
        var seal: FrameSeal?
        var proof = ""
        if let authentication {
            guard authentication.isValidAcceptorProof(welcome.proof, hello: hello, welcome: peer) else {
                state = .closed
                let reason = "\(peer.node.name) could not prove it holds this cluster's secret; is the secret the same on both nodes?"
                return [.count(.authenticationFailed), .fail(.unreachable(node: address, reason: reason)),
                        .close(reason: "handshake failed: \(reason)", rejection: nil)]
            }
            seal = authentication.frameSeal(hello: hello, welcome: peer, role: .dialer)
            proof = authentication.dialerProof(hello: hello, welcome: peer)
        }
        state = .established(peer: peer)
        return [.establish(peer: peer, seal: seal, proof: WireMessage.Proof(tag: proof))]
    }

    private mutating func violation(_ message: WireMessage) -> [Action] {
        state = .closed
        let detail = "\(message.kind) before the handshake"
        let failure: [Action] = role == .dialler ? [.fail(.unreachable(node: address, reason: "protocol violation: \(detail)"))] : []
        return failure + [.close(reason: "protocol violation: \(detail)", rejection: .messageBeforeHandshake)]
    }
}
