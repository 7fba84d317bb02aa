/// The byte classes of RFC 9110 and RFC 9112 and the small text helpers the parser and the
/// serialiser share. Everything works on UTF-8 bytes: HTTP framing is ASCII.
enum HTTPSyntax {
    static let cr: UInt8 = 0x0D
    static let lf: UInt8 = 0x0A
    static let space: UInt8 = 0x20
    static let tab: UInt8 = 0x09
    static let colon: UInt8 = 0x3A

    /// A `tchar`: what methods and header names are made of.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
             UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
             UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// A byte allowed in a field value: visible ASCII, space, tab and obs-text (0x80 and
    /// up). Never NUL, CR, LF, another control byte, or DEL.
    static func isFieldValueByte(_ byte: UInt8) -> Bool {
        byte == tab || (byte >= space && byte != 0x7F)
    }

    /// A byte allowed in a request target: visible ASCII. Browsers percent-encode
    /// everything else, and a stricter URI grammar would refuse what some of them leave
    /// as is (`|`, `{`, `^`).
    static func isTargetByte(_ byte: UInt8) -> Bool {
        byte > space && byte < 0x7F
    }

    static func isWhitespace(_ byte: UInt8) -> Bool { byte == space || byte == tab }

    /// `bytes` without leading and trailing spaces and tabs.
    static func trimmed<Bytes: BidirectionalCollection<UInt8>>(_ bytes: Bytes) -> Bytes.SubSequence {
        let start = bytes.firstIndex { !isWhitespace($0) } ?? bytes.endIndex
        let end = bytes.lastIndex { !isWhitespace($0) }.map(bytes.index(after:)) ?? start
        return bytes[start..<max(start, end)]
    }

    static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }

    /// True when `a` and `b` are equal ignoring ASCII case, as header names and
    /// connection options are compared.
    static func equalsIgnoringCase(_ a: some StringProtocol, _ b: some StringProtocol) -> Bool {
        a.utf8.count == b.utf8.count && zip(a.utf8, b.utf8).allSatisfy { lowercased($0) == lowercased($1) }
    }

    /// The comma-separated elements of list-valued fields (RFC 9110 §5.6.1), trimmed and
    /// lowercased, empty ones dropped.
    static func listElements(_ values: [String]) -> [String] {
        values.flatMap { value in
            value.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: true).compactMap { element in
                let trimmed = trimmed(element)
                return trimmed.isEmpty ? nil : String(decoding: trimmed.map(lowercased), as: UTF8.self)
            }
        }
    }

    /// `bytes` with each `%XX` decoded (and `+` as a space when `plusIsSpace`), as
    /// UTF-8 text; nil when an escape is not two hex digits or the result is not UTF-8.
    static func percentDecoded(_ bytes: some Collection<UInt8>, plusIsSpace: Bool) -> String? {
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            index = bytes.index(after: index)
            if byte == UInt8(ascii: "%") {
                guard index != bytes.endIndex, let high = hexValue(bytes[index]) else { return nil }
                index = bytes.index(after: index)
                guard index != bytes.endIndex, let low = hexValue(bytes[index]) else { return nil }
                index = bytes.index(after: index)
                decoded.append(high << 4 | low)
            } else if plusIsSpace, byte == UInt8(ascii: "+") {
                decoded.append(space)
            } else {
                decoded.append(byte)
            }
        }
        return String(validating: decoded, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
