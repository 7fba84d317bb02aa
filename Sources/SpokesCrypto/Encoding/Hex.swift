extension Sequence<UInt8> {
    /// Lower-case hex digits, two per byte: how keys, tags and nonces are written out.
    @inlinable
    public var hex: String {
        // A nibble's digit by arithmetic, into one buffer (no array per byte, no table to
        // make per call: a beacon's nonce is written this way at every beacon); inlinable,
        // so it is specialised where it is used (a generic walk asks the sequence for each
        // byte through its witness table).
        func digit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") - 10 + nibble }
        var text: [UInt8] = []
        text.reserveCapacity(underestimatedCount * 2)
        for byte in self {
            text.append(digit(byte >> 4))
            text.append(digit(byte & 0xF))
        }
        return String(decoding: text, as: UTF8.self)
    }
}

/// Runs `body` over `bytes` as one raw buffer: their own storage when it is contiguous,
/// else a copy. How the hash and MAC functions take any sequence of bytes.
func withContiguousBytes<Bytes: Sequence<UInt8>, Result>(_ bytes: Bytes, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
    if let result = bytes.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) { return result }
    return Array(bytes).withUnsafeBytes(body)
}
