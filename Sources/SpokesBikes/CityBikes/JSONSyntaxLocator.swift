/// Finds where a JSON text stops being valid JSON, as a line and column.
///
/// Foundation's `JSONDecoder` only says "The given data was not valid JSON". A person
/// fixing a hand-edited network file needs to know where, so when decoding fails we run
/// this small RFC 8259 scanner over the same bytes to find the first error. It never
/// builds values and recurses at most `maximumDepth` levels, so any input is safe.
public struct JSONSyntaxLocator: Sendable {
    /// Where and why a JSON text is invalid. Lines and columns count from 1; the column
    /// counts bytes.
    public struct SyntaxError: Sendable, Equatable, CustomStringConvertible {
        public let line: Int
        public let column: Int
        public let reason: String

        public var description: String { "line \(line), column \(column): \(reason)" }
    }

    public let maximumDepth: Int

    public init(maximumDepth: Int = 512) {
        self.maximumDepth = maximumDepth
    }

    /// The first syntax error in `bytes`, or nil when the text is valid JSON.
    public func firstError<Bytes: Collection<UInt8>>(in bytes: Bytes) -> SyntaxError? {
        var scanner = Scanner(bytes: Array(bytes), maximumDepth: maximumDepth)
        do {
            try scanner.document()
            return nil
        } catch {
            return scanner.locate(error)
        }
    }
}

private struct Failure: Error {
    let offset: Int
    let reason: String
}

private struct Scanner {
    let bytes: [UInt8]
    let maximumDepth: Int
    var index = 0

    init(bytes: [UInt8], maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    mutating func document() throws(Failure) {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        skipWhitespace()
        try value(depth: 0)
        skipWhitespace()
        if index < bytes.count { throw fail("unexpected \(describe(bytes[index])) after the end of the JSON value") }
    }

    func locate(_ failure: Failure) -> JSONSyntaxLocator.SyntaxError {
        var line = 1
        var lineStart = 0
        for position in 0..<min(failure.offset, bytes.count) where bytes[position] == UInt8(ascii: "\n") {
            line += 1
            lineStart = position + 1
        }
        return .init(line: line, column: failure.offset - lineStart + 1, reason: failure.reason)
    }

    private func fail(_ reason: String) -> Failure { Failure(offset: index, reason: reason) }

    private func describe(_ byte: UInt8) -> String {
        (0x21...0x7E).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
    }

    private mutating func skipWhitespace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    private mutating func value(depth: Int) throws(Failure) {
        guard index < bytes.count else { throw fail("unexpected end of file, expected a value") }
        switch bytes[index] {
        case UInt8(ascii: "{"): try object(depth: depth + 1)
        case UInt8(ascii: "["): try array(depth: depth + 1)
        case UInt8(ascii: "\""): try string()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
        default: throw fail("unexpected \(describe(bytes[index])), expected a value")
        }
    }

    private mutating func object(depth: Int) throws(Failure) {
        guard depth <= maximumDepth else { throw fail("nesting deeper than \(maximumDepth) levels") }
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return }
        while true {
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of file inside an object") }
            guard bytes[index] == UInt8(ascii: "\"") else {
                throw fail("unexpected \(describe(bytes[index])), expected a quoted key")
            }
            try string()
            skipWhitespace()
            try expect(":", context: "after an object key")
            skipWhitespace()
            try value(depth: depth)
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of file inside an object") }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return }
            try expect(",", context: "or '}' after an object member")
        }
    }

    private mutating func array(depth: Int) throws(Failure) {
        guard depth <= maximumDepth else { throw fail("nesting deeper than \(maximumDepth) levels") }
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return }
        while true {
            skipWhitespace()
            try value(depth: depth)
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of file inside an array") }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return }
            try expect(",", context: "or ']' after an array element")
        }
    }

    private mutating func expect(_ character: Character, context: String) throws(Failure) {
        guard index < bytes.count else { throw fail("unexpected end of file, expected '\(character)' \(context)") }
        guard bytes[index] == character.asciiValue else {
            throw fail("unexpected \(describe(bytes[index])), expected '\(character)' \(context)")
        }
        index += 1
    }

    private mutating func literal(_ word: String) throws(Failure) {
        for byte in word.utf8 {
            guard index < bytes.count, bytes[index] == byte else { throw fail("invalid literal, expected '\(word)'") }
            index += 1
        }
    }

    private mutating func string() throws(Failure) {
        index += 1
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { break }
                let escape = bytes[index]
                if escape == UInt8(ascii: "u") {
                    for _ in 0..<4 {
                        index += 1
                        guard index < bytes.count, isHexDigit(bytes[index]) else {
                            throw fail("invalid \\u escape: expected four hex digits")
                        }
                    }
                } else if !"\"\\/bfnrt".utf8.contains(escape) {
                    throw fail("invalid escape \\\(Character(Unicode.Scalar(escape)))")
                }
                index += 1
            case 0x00..<0x20:
                throw fail("control character \(describe(byte)) inside a string (newlines must be written \\n)")
            default:
                index += 1
            }
        }
        throw fail("unexpected end of file inside a string")
    }

    private func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }

    private mutating func digits() -> Int {
        let start = index
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
        return index - start
    }

    private mutating func number() throws(Failure) {
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count else { throw fail("unexpected end of file inside a number") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else if digits() == 0 {
            throw fail("invalid number: expected a digit")
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            if digits() == 0 { throw fail("invalid number: expected a digit after '.'") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            if digits() == 0 { throw fail("invalid number: expected a digit in the exponent") }
        }
    }
}
