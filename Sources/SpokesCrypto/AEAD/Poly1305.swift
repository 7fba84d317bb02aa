/// The Poly1305 one-time authenticator (RFC 8439 §2.5), written here because the project
/// takes no packages.
///
/// What: a 32-byte one-time key (r, then s) and a message give a 16-byte tag:
/// ((message blocks evaluated as a polynomial at r) mod 2^130 − 5) + s, mod 2^128.
/// Why: it is the authenticator half of ``ChaCha20Poly1305``.
/// Invariant: the accumulator lives in five 26-bit limbs multiplied as 64-bit products
/// (poly1305-donna's 32-bit layout); the final reduction chooses between h and h − p with a
/// mask, never a branch, so the time taken depends on the message's length alone. A key
/// must authenticate one message only: two tags under one key reveal it.
///
/// Incremental: ``update(_:)`` any number of times, then ``finalize()`` once.
public struct Poly1305: Sendable {
    /// Bytes in a one-time key.
    public static let keySize = 32
    /// Bytes in a tag.
    public static let tagSize = 16

    // r, clamped, in 26-bit limbs; and 5·r1 … 5·r4, which fold the product's high limbs back.
    private let r0, r1, r2, r3, r4: UInt32
    private let s1, s2, s3, s4: UInt32
    /// s, the key's second half, as four little-endian words.
    private let pad: (UInt32, UInt32, UInt32, UInt32)
    /// The accumulator, partially reduced.
    private var h0: UInt32 = 0, h1: UInt32 = 0, h2: UInt32 = 0, h3: UInt32 = 0, h4: UInt32 = 0
    /// The bytes of an unfinished block, between updates.
    private var pending: (UInt64, UInt64) = (0, 0)
    private var pendingCount = 0

    private static let limbMask: UInt32 = 0x3ff_ffff

    /// An authenticator under this 32-byte one-time key; nil for any other length.
    public init?<Key: Collection<UInt8>>(key: Key) {
        guard key.count == Self.keySize else { return nil }
        self = withBytes(of: key) { Poly1305(keyBytes: $0) }
    }

    /// The authenticator under the 32 bytes of `keyBytes` (the AEAD's block 0, in place).
    init(keyBytes: UnsafeRawBufferPointer) {
        precondition(keyBytes.count >= Self.keySize)
        func word(_ offset: Int) -> UInt32 {
            UInt32(littleEndian: keyBytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
        }
        // Clamping (RFC 8439 §2.5) folded into the limb masks, as in poly1305-donna.
        r0 = word(0) & 0x3ff_ffff
        r1 = (word(3) >> 2) & 0x3ff_ff03
        r2 = (word(6) >> 4) & 0x3ff_c0ff
        r3 = (word(9) >> 6) & 0x3f0_3fff
        r4 = (word(12) >> 8) & 0x00f_ffff
        s1 = r1 &* 5
        s2 = r2 &* 5
        s3 = r3 &* 5
        s4 = r4 &* 5
        pad = (word(16), word(20), word(24), word(28))
    }

    /// The tag of `message` under `key`; nil if the key is not 32 bytes.
    public static func authenticationCode<Key: Collection<UInt8>, Bytes: Sequence<UInt8>>(for message: Bytes, key: Key) -> [UInt8]? {
        guard var poly = Poly1305(key: key) else { return nil }
        poly.update(message)
        return poly.finalize()
    }

    public mutating func update<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
        withContiguousBytes(bytes) { update(buffer: $0) }
    }

    private mutating func update(buffer: UnsafeRawBufferPointer) {
        var index = 0
        if pendingCount > 0 {
            let fill = pendingCount
            let take = min(16 - fill, buffer.count)
            withUnsafeMutableBytes(of: &pending) { block in
                for offset in 0..<take { block[fill + offset] = buffer[offset] }
            }
            pendingCount = fill + take
            index = take
            guard pendingCount == 16 else { return }
            var block = pending
            withUnsafeBytes(of: &block) { absorbBlocks($0, hibit: 1 << 24) }
            pending = (0, 0)
            pendingCount = 0
        }
        let whole = (buffer.count - index) / 16 * 16
        absorbBlocks(UnsafeRawBufferPointer(rebasing: buffer[index..<(index + whole)]), hibit: 1 << 24)
        index += whole
        withUnsafeMutableBytes(of: &pending) { block in
            for offset in 0..<(buffer.count - index) { block[offset] = buffer[index + offset] }
        }
        pendingCount = buffer.count - index
    }

    /// Absorbs `buffer` followed by zeros up to a multiple of 16 bytes, as whole blocks:
    /// the AEAD's `pad16` (RFC 8439 §2.8). Only between whole blocks (nothing pending).
    mutating func updatePadded(_ buffer: UnsafeRawBufferPointer) {
        precondition(pendingCount == 0, "Poly1305: padded input after a partial block")
        let whole = buffer.count / 16 * 16
        absorbBlocks(UnsafeRawBufferPointer(rebasing: buffer[0..<whole]), hibit: 1 << 24)
        guard whole < buffer.count else { return }
        var block: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &block) { block in
            for offset in whole..<buffer.count { block[offset - whole] = buffer[offset] }
        }
        withUnsafeBytes(of: &block) { absorbBlocks($0, hibit: 1 << 24) }
    }

    /// The tag of everything passed to ``update(_:)``.
    public consuming func finalize() -> [UInt8] {
        var tag = finalizeWords()
        return withUnsafeBytes(of: &tag) { Array($0) }
    }

    /// The tag as four words stored little-endian, so that the tuple's bytes are the tag.
    consuming func finalizeWords() -> (UInt32, UInt32, UInt32, UInt32) {
        if pendingCount > 0 {
            // The last, short block: its bytes, a 1 byte, then zeros, without the 2^128 bit.
            var block = pending
            let fill = pendingCount
            withUnsafeMutableBytes(of: &block) { $0[fill] = 1 }
            withUnsafeBytes(of: &block) { absorbBlocks($0, hibit: 0) }
        }
        var (h0, h1, h2, h3, h4) = (self.h0, self.h1, self.h2, self.h3, self.h4)
        let mask26 = Self.limbMask

        // Carry h fully: each limb 26 bits, h < 2^130 + a little.
        var carry = h1 >> 26; h1 &= mask26
        h2 &+= carry; carry = h2 >> 26; h2 &= mask26
        h3 &+= carry; carry = h3 >> 26; h3 &= mask26
        h4 &+= carry; carry = h4 >> 26; h4 &= mask26
        h0 &+= carry &* 5; carry = h0 >> 26; h0 &= mask26
        h1 &+= carry

        // g = h + 5 − 2^130, i.e. h − p; if that is not negative, h ≥ p and g is the result.
        var g0 = h0 &+ 5; carry = g0 >> 26; g0 &= mask26
        var g1 = h1 &+ carry; carry = g1 >> 26; g1 &= mask26
        var g2 = h2 &+ carry; carry = g2 >> 26; g2 &= mask26
        var g3 = h3 &+ carry; carry = g3 >> 26; g3 &= mask26
        var g4 = h4 &+ carry &- (1 << 26)

        // All ones when g4 did not go negative (take g), all zeros when it did (keep h).
        let takeG = (g4 >> 31) &- 1
        g0 &= takeG; g1 &= takeG; g2 &= takeG; g3 &= takeG; g4 &= takeG
        let keepH = ~takeG
        h0 = (h0 & keepH) | g0
        h1 = (h1 & keepH) | g1
        h2 = (h2 & keepH) | g2
        h3 = (h3 & keepH) | g3
        h4 = (h4 & keepH) | g4

        // h mod 2^128 as four 32-bit words, then + s mod 2^128.
        let w0 = h0 | h1 << 26
        let w1 = h1 >> 6 | h2 << 20
        let w2 = h2 >> 12 | h3 << 14
        let w3 = h3 >> 18 | h4 << 8
        var sum = UInt64(w0) &+ UInt64(pad.0)
        let t0 = UInt32(truncatingIfNeeded: sum)
        sum = UInt64(w1) &+ UInt64(pad.1) &+ (sum >> 32)
        let t1 = UInt32(truncatingIfNeeded: sum)
        sum = UInt64(w2) &+ UInt64(pad.2) &+ (sum >> 32)
        let t2 = UInt32(truncatingIfNeeded: sum)
        sum = UInt64(w3) &+ UInt64(pad.3) &+ (sum >> 32)
        let t3 = UInt32(truncatingIfNeeded: sum)

        return (t0.littleEndian, t1.littleEndian, t2.littleEndian, t3.littleEndian)
    }

    /// h = (h + block + hibit·2^128) · r mod 2^130 − 5 (partially reduced), for each whole
    /// 16-byte block of `buffer`.
    private mutating func absorbBlocks(_ buffer: UnsafeRawBufferPointer, hibit: UInt32) {
        let (r0, r1, r2, r3, r4) = (UInt64(self.r0), UInt64(self.r1), UInt64(self.r2), UInt64(self.r3), UInt64(self.r4))
        let (s1, s2, s3, s4) = (UInt64(self.s1), UInt64(self.s2), UInt64(self.s3), UInt64(self.s4))
        var (h0, h1, h2, h3, h4) = (self.h0, self.h1, self.h2, self.h3, self.h4)
        let mask26 = Self.limbMask
        var offset = 0
        while offset + 16 <= buffer.count {
            @inline(__always) func word(_ at: Int) -> UInt32 {
                UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: offset + at, as: UInt32.self))
            }
            h0 &+= word(0) & mask26
            h1 &+= (word(3) >> 2) & mask26
            h2 &+= (word(6) >> 4) & mask26
            h3 &+= (word(9) >> 6) & mask26
            h4 &+= (word(12) >> 8) | hibit

            let (a0, a1, a2, a3, a4) = (UInt64(h0), UInt64(h1), UInt64(h2), UInt64(h3), UInt64(h4))
            let d0 = a0 &* r0 &+ a1 &* s4 &+ a2 &* s3 &+ a3 &* s2 &+ a4 &* s1
            var d1 = a0 &* r1 &+ a1 &* r0 &+ a2 &* s4 &+ a3 &* s3 &+ a4 &* s2
            var d2 = a0 &* r2 &+ a1 &* r1 &+ a2 &* r0 &+ a3 &* s4 &+ a4 &* s3
            var d3 = a0 &* r3 &+ a1 &* r2 &+ a2 &* r1 &+ a3 &* r0 &+ a4 &* s4
            var d4 = a0 &* r4 &+ a1 &* r3 &+ a2 &* r2 &+ a3 &* r1 &+ a4 &* r0

            var carry = d0 >> 26; h0 = UInt32(truncatingIfNeeded: d0) & mask26
            d1 &+= carry; carry = d1 >> 26; h1 = UInt32(truncatingIfNeeded: d1) & mask26
            d2 &+= carry; carry = d2 >> 26; h2 = UInt32(truncatingIfNeeded: d2) & mask26
            d3 &+= carry; carry = d3 >> 26; h3 = UInt32(truncatingIfNeeded: d3) & mask26
            d4 &+= carry; carry = d4 >> 26; h4 = UInt32(truncatingIfNeeded: d4) & mask26
            h0 &+= UInt32(truncatingIfNeeded: carry) &* 5
            let top = h0 >> 26; h0 &= mask26
            h1 &+= top
            offset += 16
        }
        (self.h0, self.h1, self.h2, self.h3, self.h4) = (h0, h1, h2, h3, h4)
    }
}
