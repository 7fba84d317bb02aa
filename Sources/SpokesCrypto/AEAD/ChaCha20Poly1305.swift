/// AEAD_CHACHA20_POLY1305 (RFC 8439 §2.8): authenticated encryption with associated data.
///
/// What: ``seal(_:nonce:authenticating:)`` encrypts a plaintext with ChaCha20 (from block 1)
/// and appends a 16-byte Poly1305 tag over the associated data and the ciphertext, under a
/// one-time key taken from ChaCha20's block 0; ``open(_:nonce:authenticating:)`` checks the
/// tag and only then decrypts.
/// Why: it hides a frame's bytes and proves they come, unchanged, from a holder of the key;
/// it needs no tables and no special instructions to run fast and in constant time.
/// Invariant: a (key, nonce) pair seals one message only (reusing a nonce reveals the XOR of
/// two plaintexts and lets a forger compute tags); `open` compares the tag in constant time
/// and returns nothing, not even a partial plaintext, when it is wrong.
public struct ChaCha20Poly1305: Sendable {
    /// Bytes in a key.
    public static let keySize = ChaCha20.keySize
    /// Bytes in a nonce.
    public static let nonceSize = ChaCha20.Nonce.size
    /// Bytes in a tag, which ``seal(_:nonce:authenticating:)`` appends to the ciphertext.
    public static let tagSize = Poly1305.tagSize
    /// The longest plaintext: ChaCha20's 32-bit block counter, starting from 1.
    public static let maximumPlaintextSize = ((1 << 32) - 1) * ChaCha20.blockSize

    private let cipher: ChaCha20

    /// The AEAD under this 32-byte key; nil for any other length.
    public init?<Key: Collection<UInt8>>(key: Key) {
        guard let cipher = ChaCha20(key: key) else { return nil }
        self.cipher = cipher
    }

    /// The ciphertext of `plaintext` followed by its 16-byte tag, which also covers
    /// `associatedData` (authenticated, not encrypted, not included in the output).
    ///
    /// - Precondition: `plaintext` holds at most ``maximumPlaintextSize`` bytes.
    public func seal<Plaintext: Collection<UInt8>, AssociatedData: Collection<UInt8>>(
        _ plaintext: Plaintext, nonce: ChaCha20.Nonce, authenticating associatedData: AssociatedData = [UInt8]()
    ) -> [UInt8] {
        precondition(plaintext.count <= Self.maximumPlaintextSize, "ChaCha20-Poly1305: plaintext too long")
        let count = plaintext.count
        var output = [UInt8](repeating: 0, count: count + Self.tagSize)
        output.withUnsafeMutableBytes { output in
            let body = UnsafeMutableRawBufferPointer(rebasing: output[0..<count])
            withBytes(of: plaintext) { body.copyMemory(from: $0) }
            cipher.xorKeystream(into: body, nonce: nonce, counter: 1)
            let mac = withBytes(of: associatedData) { tag(associatedData: $0, ciphertext: UnsafeRawBufferPointer(body), nonce: nonce) }
            withUnsafeBytes(of: mac) { UnsafeMutableRawBufferPointer(rebasing: output[count...]).copyMemory(from: $0) }
        }
        return output
    }

    /// The plaintext of `sealed` (a ciphertext followed by its tag) if the tag is right for
    /// it and `associatedData`; nil otherwise, including when `sealed` is shorter than a tag.
    public func open<Sealed: Collection<UInt8>, AssociatedData: Collection<UInt8>>(
        _ sealed: Sealed, nonce: ChaCha20.Nonce, authenticating associatedData: AssociatedData = [UInt8]()
    ) -> [UInt8]? {
        guard sealed.count >= Self.tagSize else { return nil }
        let count = sealed.count - Self.tagSize
        var output = [UInt8](repeating: 0, count: count)
        let valid = withBytes(of: sealed) { sealed in
            let ciphertext = UnsafeRawBufferPointer(rebasing: sealed[0..<count])
            let received = UnsafeRawBufferPointer(rebasing: sealed[count...])
            let expected = withBytes(of: associatedData) { tag(associatedData: $0, ciphertext: ciphertext, nonce: nonce) }
            guard withUnsafeBytes(of: expected, { constantTimeEquals($0, received) }) else { return false }
            output.withUnsafeMutableBytes { output in
                output.copyMemory(from: ciphertext)
                cipher.xorKeystream(into: output, nonce: nonce, counter: 1)
            }
            return true
        }
        return valid ? output : nil
    }

    /// Poly1305 over `associatedData ‖ pad16 ‖ ciphertext ‖ pad16 ‖ len(aad) ‖ len(ciphertext)`
    /// (lengths as 64-bit little-endian), under the one-time key of block 0.
    private func tag(associatedData: UnsafeRawBufferPointer, ciphertext: UnsafeRawBufferPointer, nonce: ChaCha20.Nonce) -> Tag {
        var block = cipher.keystreamBlock(counter: 0, nonce: nonce)
        var poly = withUnsafeBytes(of: &block) { Poly1305(keyBytes: UnsafeRawBufferPointer(rebasing: $0[0..<Poly1305.keySize])) }
        poly.updatePadded(associatedData)
        poly.updatePadded(ciphertext)
        var lengths = (UInt64(associatedData.count).littleEndian, UInt64(ciphertext.count).littleEndian)
        withUnsafeBytes(of: &lengths) { poly.updatePadded($0) }
        return poly.finalizeWords()
    }

    /// A tag: four words stored little-endian, whose bytes are the tag.
    private typealias Tag = (UInt32, UInt32, UInt32, UInt32)
}

/// Calls `body` with the bytes of `collection`, in place when they are contiguous, else
/// from a copy.
func withBytes<Bytes: Collection<UInt8>, Result>(of collection: Bytes, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
    if let result = collection.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) {
        return result
    }
    return Array(collection).withUnsafeBytes(body)
}
