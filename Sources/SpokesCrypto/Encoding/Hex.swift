extension Sequence<UInt8> {
    /// Lower-case hex digits, two per byte: how keys, tags and nonces are written out.
    public var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in self { text += [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]] }
        return String(decoding: text, as: UTF8.self)
    }
}

/// Runs `body` over `bytes` as one raw buffer: their own storage when it is contiguous,
/// else a copy. How the hash and MAC functions take any sequence of bytes.
func withContiguousBytes<Bytes: Sequence<UInt8>, Result>(_ bytes: Bytes, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
    if let result = bytes.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) { return result }
    return Array(bytes).withUnsafeBytes(body)
}
