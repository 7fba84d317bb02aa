/// Numbers a hostile or broken peer may put where a JSON text has a number: beyond
/// `Double` (JSON has no NaN or infinity, `1e309` is the nearest), finite but huge,
/// negative, the edges of 64-bit integers, a fraction, zero, and values of other types.
enum HostileNumbers {
    static let literals = [
        "1e309", "-1e309", "1e300", "-1e300", "-1", "0", "1.5",
        "9223372036854775807", "9223372036854775808", "-9223372036854775809", "18446744073709551616",
        #""7""#, "null", "true", "[]", "{}",
    ]

    /// One variant of `json` per number in it and per literal: that number replaced by
    /// that literal. `field` says which (its position and the literal) for messages.
    static func variants(of json: String) -> [(field: String, text: String)] {
        let bytes = Array(json.utf8)
        var variants: [(String, String)] = []
        for (index, range) in numberRanges(in: bytes).enumerated() {
            let original = String(decoding: bytes[range], as: UTF8.self)
            for literal in literals {
                let text = String(decoding: bytes[..<range.lowerBound], as: UTF8.self) + literal
                    + String(decoding: bytes[range.upperBound...], as: UTF8.self)
                variants.append(("number #\(index) (\(original)) as \(literal)", text))
            }
        }
        return variants
    }

    /// Where the numbers are in a JSON text: runs of number characters outside strings.
    static func numberRanges(in bytes: [UInt8]) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var index = 0
        var inString = false
        while index < bytes.count {
            let byte = bytes[index]
            if inString {
                if byte == UInt8(ascii: "\\") { index += 1 } else if byte == UInt8(ascii: "\"") { inString = false }
                index += 1
            } else if byte == UInt8(ascii: "\"") {
                inString = true
                index += 1
            } else if byte == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                let start = index
                while index < bytes.count, Array("0123456789+-.eE".utf8).contains(bytes[index]) { index += 1 }
                ranges.append(start..<index)
            } else {
                index += 1
            }
        }
        return ranges
    }
}
