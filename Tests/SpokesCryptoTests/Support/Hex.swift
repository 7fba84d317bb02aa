/// Hex strings for test vectors.
extension Array where Element == UInt8 {
    init(hex: String) {
        let digits = Array(hex.utf8)
        precondition(digits.count % 2 == 0, "odd number of hex digits")
        self = stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
    }
}

extension Sequence<UInt8> {
    /// Lower-case hex digits, two per byte.
    var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in self { text += [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]] }
        return String(decoding: text, as: UTF8.self)
    }
}

/// The bytes of hex strings written one after the other (long vectors span lines).
func bytes(_ parts: String...) -> [UInt8] {
    [UInt8](hex: parts.joined())
}
