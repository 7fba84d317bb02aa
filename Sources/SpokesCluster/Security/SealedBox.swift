/// Seals and opens single messages under one key of the cluster secret, sans-IO: what a
/// datagram (a beacon, a probe) or a connection's handshake frames carry, so nothing in
/// them is readable without the secret.
///
/// A box is `nonce ‖ ciphertext ‖ tag`: a fresh random 96-bit nonce, then the message
/// sealed with ChaCha20-Poly1305 (RFC 8439) under the key the secret derives for this
/// box's purpose (HKDF-SHA256, ``ClusterSecret/encryptionKey(for:)``), authenticating
/// `associated` bytes besides. Random nonces are safe here: a key seals far fewer than
/// the 2^32 messages after which two random 96-bit nonces would be likely to meet.
/// A box that does not open (another secret, altered, cut, or no box at all) gives nil and
/// says nothing of why. Replays are the caller's to judge (a beacon's time and nonce; a
/// probe's outstanding nonce; a handshake's fresh nonces and proofs).
struct SealedBox: Sendable {
    /// Bytes a box adds to its message.
    static let overhead = ChaCha20.Nonce.size + ChaCha20Poly1305.tagSize

    private let aead: ChaCha20Poly1305

    init(secret: ClusterSecret, purpose: ClusterSecret.Purpose) {
        // The key is 32 bytes by construction: never nil.
        aead = ChaCha20Poly1305(key: secret.encryptionKey(for: purpose))!
    }

    /// `message` sealed, with a fresh nonce.
    func seal<Message: Collection<UInt8>>(_ message: Message, authenticating associated: [UInt8] = []) -> [UInt8] {
        let nonce = randomBytes(ChaCha20.Nonce.size)
        // Twelve bytes make a nonce: never nil.
        return nonce + aead.seal(message, nonce: ChaCha20.Nonce(nonce)!, authenticating: associated)
    }

    /// The message in `box`, if it opens under this key with `associated`.
    func open<Box: Collection<UInt8>>(_ box: Box, authenticating associated: [UInt8] = []) -> [UInt8]? {
        guard box.count >= Self.overhead, let nonce = ChaCha20.Nonce(box.prefix(ChaCha20.Nonce.size)) else { return nil }
        return aead.open(box.dropFirst(ChaCha20.Nonce.size), nonce: nonce, authenticating: associated)
    }
}
