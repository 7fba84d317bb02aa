/// The cryptographic half of the connection handshake, sans-IO: proofs that each side
/// holds the cluster secret, and the seal that encrypts and authenticates every later
/// frame.
///
/// The exchange (see SECURITY.md):
/// 1. dialler → `hello` with a fresh nonce;
/// 2. acceptor → `welcome` with its own fresh nonce and a proof
///    `HMAC(K, "acceptor" ‖ transcript)`;
/// 3. dialler checks that proof, then → `proof` with `HMAC(K, "dialler" ‖ transcript)`;
///    the acceptor checks it before it treats the dialler as a peer.
///
/// The transcript holds every field of both handshakes (length-prefixed), so a tampered
/// hello or welcome fails both proofs; both nonces are in it, so no proof can be replayed
/// into another connection; the two roles use different labels, so a proof the acceptor
/// gives a stranger can never pass as a dialler's proof. `K` is the secret's handshake
/// key; without a secret the fields are exchanged the same way and the proofs are empty.
/// From protocol 4 the transcript also holds both sides' ranges of protocol versions when
/// both sent one (see ``ProtocolVersions``).
struct HandshakeAuthentication: Sendable {
    private let key: HMAC

    init(secret: ClusterSecret) {
        key = secret.key(for: .handshake)
    }

    /// Bytes in a handshake nonce.
    static let nonceSize = 32

    /// A fresh nonce, as hex.
    static func makeNonce() -> String { randomBytes(nonceSize).hex }

    func acceptorProof(hello: WireMessage.Handshake, welcome: WireMessage.Handshake) -> String {
        tag("acceptor", hello, welcome).hex
    }

    func dialerProof(hello: WireMessage.Handshake, welcome: WireMessage.Handshake) -> String {
        tag("dialler", hello, welcome).hex
    }

    func isValidAcceptorProof(_ proof: String, hello: WireMessage.Handshake, welcome: WireMessage.Handshake) -> Bool {
        constantTimeEquals(Array(proof.utf8), Array(acceptorProof(hello: hello, welcome: welcome).utf8))
    }

    func isValidDialerProof(_ proof: String, hello: WireMessage.Handshake, welcome: WireMessage.Handshake) -> Bool {
        constantTimeEquals(Array(proof.utf8), Array(dialerProof(hello: hello, welcome: welcome).utf8))
    }

    /// The seal of the session's frames for the side playing `role` (see ``FrameSeal``):
    /// its keys come from a key bound to the whole transcript (both handshakes, both
    /// nonces) and from both nonces, so they are fresh for every connection and a frame
    /// of one session never opens in another.
    func frameSeal(hello: WireMessage.Handshake, welcome: WireMessage.Handshake, role: FrameSeal.Role) -> FrameSeal {
        FrameSeal(secret: tag("session frames", hello, welcome), dialerNonce: Array(hello.nonce.utf8),
                  acceptorNonce: Array(welcome.nonce.utf8), role: role)
    }

    private func tag(_ label: String, _ hello: WireMessage.Handshake, _ welcome: WireMessage.Handshake) -> [UInt8] {
        key.authenticationCode { hasher in
            Self.append(label, to: &hasher)
            for side in [hello, welcome] {
                for field in [String(side.protocolVersion), side.cluster, side.node.name, String(side.node.incarnation),
                              side.address, String(side.slots), String(side.waitingSlots), side.nonce, side.authenticated ? "secret" : "open"] {
                    Self.append(field, to: &hasher)
                }
            }
            // Protocol 4's range exchange: bound into the proofs only when both sides sent
            // their range. A release of protocol 3 never sees a range (its decoder skips
            // the field), so with one its transcript is the fields above, as it computes it.
            // A range cannot be stripped or altered in transit without the secret: the
            // handshake frames are sealed (``SealedBox``), and the proofs cover the rest.
            if let dialler = hello.highestProtocolVersion, let acceptor = welcome.highestProtocolVersion {
                Self.append("protocol versions \(hello.protocolVersion) \(dialler) \(welcome.protocolVersion) \(acceptor)", to: &hasher)
            }
        }
    }

    /// Appends a field as its 4-byte length then its bytes, so no two different field
    /// lists hash alike.
    private static func append(_ field: String, to hasher: inout SHA256) {
        let bytes = Array(field.utf8)
        let length = UInt32(bytes.count)
        hasher.update([UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)])
        hasher.update(bytes)
    }
}
