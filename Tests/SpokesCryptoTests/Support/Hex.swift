/// Hex strings for test vectors.
extension Array where Element == UInt8 {
    init(hex: String) {
        let digits = Array(hex.utf8)
        precondition(digits.count % 2 == 0, "odd number of hex digits")
        self = stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
    }
}


/// The bytes of hex strings written one after the other (long vectors span lines).
func bytes(_ parts: String...) -> [UInt8] {
    [UInt8](hex: parts.joined())
}
