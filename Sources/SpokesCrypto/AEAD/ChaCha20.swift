/// The ChaCha20 stream cipher (RFC 8439 §2.1–2.4), written here because the project takes
/// no packages.
///
/// What: a 256-bit key, a 96-bit ``Nonce`` and a 32-bit block counter give 64-byte keystream
/// blocks; encryption and decryption are the same XOR of that keystream.
/// Why: it is the cipher half of ``ChaCha20Poly1305``, fast in plain integer code.
/// Invariant: only additions, XORs and fixed rotations of 32-bit words, so the time taken
/// depends on the lengths alone, never on the key or the data; a (key, nonce) pair must
/// never encrypt two different messages (the caller's duty: ``FrameSeal`` counts frames).
public struct ChaCha20: Sendable {
    /// Bytes in a key.
    public static let keySize = 32
    /// Bytes in a keystream block.
    public static let blockSize = 64

    /// A 96-bit nonce, as the three little-endian words of the state's last row.
    ///
    /// Why a type: a nonce of the wrong size never reaches the cipher (Wycheproof's
    /// invalid-size vectors stop here), and ``init(prefix:counter:)`` builds counter nonces.
    /// Invariant: exactly 12 bytes; the failable initializer refuses any other length.
    public struct Nonce: Sendable, Equatable {
        /// Bytes in a nonce.
        public static let size = 12

        let words: (UInt32, UInt32, UInt32)

        /// The nonce of these 12 bytes; nil for any other count.
        public init?<Bytes: Collection<UInt8>>(_ bytes: Bytes) {
            guard bytes.count == Self.size else { return nil }
            let array = Array(bytes)
            words = (littleEndianWord(array, 0), littleEndianWord(array, 4), littleEndianWord(array, 8))
        }

        /// RFC 8439 §2.8's layout: a 32-bit constant (`prefix`, little-endian) then a
        /// 64-bit counter (little-endian), the counter being what makes each nonce unique.
        public init(prefix: UInt32 = 0, counter: UInt64) {
            words = (prefix, UInt32(truncatingIfNeeded: counter), UInt32(truncatingIfNeeded: counter >> 32))
        }

        /// The 12 bytes.
        public var bytes: [UInt8] {
            [words.0, words.1, words.2].flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (8 * $0)) } }
        }

        public static func == (a: Nonce, b: Nonce) -> Bool { a.words == b.words }
    }

    /// The key as eight little-endian words (state words 4 to 11).
    private let key: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32)

    /// The cipher under this 32-byte key; nil for any other length.
    public init?<Key: Collection<UInt8>>(key: Key) {
        guard key.count == Self.keySize else { return nil }
        let bytes = Array(key)
        self.key = (littleEndianWord(bytes, 0), littleEndianWord(bytes, 4), littleEndianWord(bytes, 8), littleEndianWord(bytes, 12),
                    littleEndianWord(bytes, 16), littleEndianWord(bytes, 20), littleEndianWord(bytes, 24), littleEndianWord(bytes, 28))
    }

    /// The serialized keystream block `counter` for `nonce` (RFC 8439 §2.3).
    public func block(counter: UInt32, nonce: Nonce) -> [UInt8] {
        var block = keystreamBlock(counter: counter, nonce: nonce)
        return withUnsafeBytes(of: &block) { Array($0) }
    }

    /// `bytes` XORed with the keystream from block `counter` on: encrypts plaintext and
    /// decrypts ciphertext alike (RFC 8439 §2.4).
    ///
    /// - Precondition: the keystream does not run past block 2^32 − 1 (256 GiB from block 0).
    public func encrypt<Bytes: Collection<UInt8>>(_ bytes: Bytes, nonce: Nonce, counter: UInt32 = 0) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: bytes.count)
        output.withUnsafeMutableBytes { output in
            withBytes(of: bytes) { output.copyMemory(from: $0) }
            xorKeystream(into: output, nonce: nonce, counter: counter)
        }
        return output
    }

    /// XORs the keystream from block `counter` on into `buffer`, in place.
    func xorKeystream(into buffer: UnsafeMutableRawBufferPointer, nonce: Nonce, counter: UInt32) {
        precondition(UInt64(buffer.count) <= ((UInt64(1) << 32) - UInt64(counter)) * UInt64(Self.blockSize),
                     "ChaCha20: the block counter would wrap")
        var counter = counter
        var offset = 0
        while offset < buffer.count {
            var block = keystreamBlock(counter: counter, nonce: nonce)
            let count = min(Self.blockSize, buffer.count - offset)
            withUnsafeBytes(of: &block) { keystream in
                if count == Self.blockSize {
                    for index in stride(from: 0, to: Self.blockSize, by: 8) {
                        let word = buffer.loadUnaligned(fromByteOffset: offset + index, as: UInt64.self)
                            ^ keystream.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                        buffer.storeBytes(of: word, toByteOffset: offset + index, as: UInt64.self)
                    }
                } else {
                    for index in 0..<count { buffer[offset + index] ^= keystream[index] }
                }
            }
            counter &+= 1
            offset += count
        }
    }

    /// The 16 words of block `counter`, each stored little-endian so that the tuple's bytes
    /// are the serialized block.
    @inline(__always)
    func keystreamBlock(counter: UInt32, nonce: Nonce) -> KeystreamBlock {
        // "expand 32-byte k", the constants of state words 0 to 3.
        let (c0, c1, c2, c3): (UInt32, UInt32, UInt32, UInt32) = (0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574)
        let (k0, k1, k2, k3, k4, k5, k6, k7) = key
        let (n0, n1, n2) = nonce.words
        var (x0, x1, x2, x3) = (c0, c1, c2, c3)
        var (x4, x5, x6, x7, x8, x9, x10, x11) = (k0, k1, k2, k3, k4, k5, k6, k7)
        var (x12, x13, x14, x15) = (counter, n0, n1, n2)
        for _ in 0..<10 {
            // A column round, then a diagonal round (RFC 8439 §2.3).
            quarterRound(&x0, &x4, &x8, &x12)
            quarterRound(&x1, &x5, &x9, &x13)
            quarterRound(&x2, &x6, &x10, &x14)
            quarterRound(&x3, &x7, &x11, &x15)
            quarterRound(&x0, &x5, &x10, &x15)
            quarterRound(&x1, &x6, &x11, &x12)
            quarterRound(&x2, &x7, &x8, &x13)
            quarterRound(&x3, &x4, &x9, &x14)
        }
        return ((x0 &+ c0).littleEndian, (x1 &+ c1).littleEndian, (x2 &+ c2).littleEndian, (x3 &+ c3).littleEndian,
                (x4 &+ k0).littleEndian, (x5 &+ k1).littleEndian, (x6 &+ k2).littleEndian, (x7 &+ k3).littleEndian,
                (x8 &+ k4).littleEndian, (x9 &+ k5).littleEndian, (x10 &+ k6).littleEndian, (x11 &+ k7).littleEndian,
                (x12 &+ counter).littleEndian, (x13 &+ n0).littleEndian, (x14 &+ n1).littleEndian, (x15 &+ n2).littleEndian)
    }

    /// A keystream block: 16 words in a tuple, which Swift lays out contiguously like a C array.
    typealias KeystreamBlock = (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32,
                                UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32)
}

/// The ChaCha quarter round (RFC 8439 §2.1).
@inline(__always)
private func quarterRound(_ a: inout UInt32, _ b: inout UInt32, _ c: inout UInt32, _ d: inout UInt32) {
    a &+= b; d ^= a; d = rotateLeft(d, 16)
    c &+= d; b ^= c; b = rotateLeft(b, 12)
    a &+= b; d ^= a; d = rotateLeft(d, 8)
    c &+= d; b ^= c; b = rotateLeft(b, 7)
}

@inline(__always)
private func rotateLeft(_ value: UInt32, _ count: UInt32) -> UInt32 {
    value << count | value >> (32 - count)
}

/// The little-endian word at `offset` of `bytes`.
@inline(__always)
func littleEndianWord(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
    UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
}
