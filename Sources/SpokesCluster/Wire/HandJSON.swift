import Glibc

/// The pieces of JSON written and read by hand, for the fixed forms of the hot messages
/// (``WireCodec``: calls, replies, heartbeats; `BeaconCodec`: discovery's beacons; the
/// ``HandWrittenArgument``s of calls, such as Raft's messages), off `Codable`'s generic
/// paths (issue 33 §1).
///
/// A writer puts out what `JSONDecoder` reads (strings escaped as JSON needs, numbers
/// in their plain decimal form); a ``Reader`` reads only one form, byte by byte, bounds
/// checked, and answers nil at the first byte off it, so its user can leave whatever it
/// does not read to `JSONDecoder`, with its errors: a hand reader is only ever a faster
/// way to the value `JSONDecoder` would give.
public enum HandJSON {
    /// `value` in decimal, without a leading zero.
    public static func number(_ value: UInt64, to out: inout [UInt8]) {
        // Appended last digit first, then turned around in place (no array of its own
        // per number, no count of the digits first).
        var low = out.count
        var rest = value
        repeat {
            out.append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        } while rest > 0
        var high = out.count - 1
        while low < high {
            out.swapAt(low, high)
            low += 1
            high -= 1
        }
    }

    /// `value` in decimal, with its sign when negative.
    public static func integer(_ value: Int, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        number(UInt64(value.magnitude), to: &out)
    }

    /// `value` as Swift prints it (the shortest text that reads back as the same
    /// double, a JSON number for every finite value); nil for infinities and NaN, which
    /// JSON has no number for.
    public static func double(_ value: Double, to out: inout [UInt8]) -> Bool {
        guard value.isFinite else { return false }
        out += value.description.utf8
        return true
    }

    public static func bool(_ value: Bool, to out: inout [UInt8]) {
        out += value ? Literal.true : Literal.false
    }

    private static let hex = Array("0123456789abcdef".utf8)

    /// `text` as a JSON string: quote, backslash and control characters escaped, the
    /// rest as its UTF-8. A text with nothing to escape (a name) is copied whole; one with
    /// escapes (a call's arguments, JSON in a string) is escaped into a buffer of its exact
    /// length, counted first, and appended at once: appended a byte or a run at a time,
    /// each append paid its own checks, most of the cost of writing such a text.
    public static func string(_ text: String, to out: inout [UInt8]) {
        var text = text
        text.withUTF8 { utf8 in
            let extra = escapedExtra.withUnsafeBufferPointer { table in
                utf8.reduce(0) { $0 &+ Int(table[Int($1)]) }
            }
            out.append(UInt8(ascii: "\""))
            guard extra > 0 else {
                out.append(contentsOf: utf8)
                out.append(UInt8(ascii: "\""))
                return
            }
            let escaped = [UInt8](unsafeUninitializedCapacity: utf8.count + extra + 1) { buffer, count in
                var at = 0
                func put(_ byte: UInt8) {
                    buffer[at] = byte
                    at += 1
                }
                for byte in utf8 {
                    switch byte {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"): put(UInt8(ascii: "\\")); put(byte)
                    case 0x0A: put(UInt8(ascii: "\\")); put(UInt8(ascii: "n"))
                    case 0x0D: put(UInt8(ascii: "\\")); put(UInt8(ascii: "r"))
                    case 0x09: put(UInt8(ascii: "\\")); put(UInt8(ascii: "t"))
                    case ..<0x20:
                        for digit in [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]] { put(digit) }
                    default: put(byte)
                    }
                }
                put(UInt8(ascii: "\""))
                count = at
            }
            out.append(contentsOf: escaped)
        }
    }

    /// How many bytes longer each byte is escaped in a JSON string (``string(_:to:)``): 1
    /// for a quote, a backslash, `\n`, `\r` and `\t`, 5 for another control character
    /// (`\u00XX`), 0 for the rest.
    private static let escapedExtra: [UInt8] = (0..<256).map { byte in
        switch byte {
        case 0x22, 0x5C, 0x0A, 0x0D, 0x09: 1
        case ..<0x20: 5
        default: 0
        }
    }

    public static func strings(_ texts: [String], to out: inout [UInt8]) { array(texts, to: &out, string) }

    /// `elements` as a JSON array, each written by `element`, no space (what
    /// ``Reader/array(_:)`` reads back).
    @inlinable
    public static func array<Element>(_ elements: [Element], to out: inout [UInt8], _ element: (Element, inout [UInt8]) -> Void) {
        out.append(UInt8(ascii: "["))
        for (index, value) in elements.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            element(value, &out)
        }
        out.append(UInt8(ascii: "]"))
    }

    private enum Literal {
        static let `true` = Array("true".utf8)
        static let `false` = Array("false".utf8)
    }

    /// Reads one fixed form, byte by byte, bounds checked; every method returns nil (or
    /// false) at the first byte that does not fit it, where the reader's position is then
    /// of no use.
    public struct Reader {
        let bytes: ArraySlice<UInt8>
        var index: Int

        public init(bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            index = bytes.startIndex
        }

        public var atEnd: Bool { index == bytes.endIndex }

        public mutating func literal(_ expected: [UInt8]) -> Bool {
            guard bytes.endIndex - index >= expected.count else { return false }
            let offset = index - bytes.startIndex
            let matches = bytes.withUnsafeBufferPointer { have in
                expected.withUnsafeBufferPointer { want in
                    want.isEmpty || memcmp(have.baseAddress! + offset, want.baseAddress!, want.count) == 0
                }
            }
            guard matches else { return false }
            index += expected.count
            return true
        }

        public mutating func byte(_ expected: UInt8) -> Bool {
            guard index < bytes.endIndex, bytes[index] == expected else { return false }
            index += 1
            return true
        }

        /// Digits without a leading zero (but `0`), at most `UInt64.max`.
        public mutating func number() -> UInt64? {
            let start = index
            var value: UInt64 = 0
            while index < bytes.endIndex, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                let (times, overflowTimes) = value.multipliedReportingOverflow(by: 10)
                let (sum, overflowSum) = times.addingReportingOverflow(UInt64(bytes[index] - UInt8(ascii: "0")))
                guard !overflowTimes, !overflowSum else { return nil }
                value = sum
                index += 1
            }
            guard index > start, index - start == 1 || bytes[start] != UInt8(ascii: "0") else { return nil }
            return value
        }

        /// A number as ``HandJSON/integer(_:to:)`` writes it, within `Int` (`-0` is nil).
        public mutating func integer() -> Int? {
            let negative = byte(UInt8(ascii: "-"))
            guard let magnitude = number() else { return nil }
            if negative {
                guard magnitude > 0, magnitude <= UInt64(Int.max) + 1 else { return nil }
                return magnitude == UInt64(Int.max) + 1 ? Int.min : -Int(magnitude)
            }
            return magnitude <= UInt64(Int.max) ? Int(magnitude) : nil
        }

        /// A number exactly as ``HandJSON/double(_:to:)`` writes it: the text Swift
        /// prints for the double it reads as (so nothing of the edges of `Double`'s
        /// parsing, say an exponent past its range, is read here).
        public mutating func double() -> Double? {
            let start = index
            while index < bytes.endIndex, Self.mayBeInNumber(bytes[index]) { index += 1 }
            guard index > start, index - start <= 32 else { return nil }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            guard let value = Double(text), value.isFinite, value.description == text else { return nil }
            return value
        }

        /// The bytes a number Swift prints may hold (what `double()` scans before it
        /// checks the text exactly).
        private static func mayBeInNumber(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "e"): true
            default: false
            }
        }

        public mutating func bool() -> Bool? {
            if literal(Literal.true) { return true }
            if literal(Literal.false) { return false }
            return nil
        }

        public mutating func strings() -> [String]? { array { $0.string() } }

        /// A JSON array as the writers put one out: `[`, the elements `element` reads
        /// between commas, `]`, no space; nil at the first element it does not read.
        @inlinable
        public mutating func array<Element>(_ element: (inout Reader) -> Element?) -> [Element]? {
            guard byte(UInt8(ascii: "[")) else { return nil }
            var elements: [Element] = []
            if byte(UInt8(ascii: "]")) { return elements }
            repeat {
                guard let next = element(&self) else { return nil }
                elements.append(next)
            } while byte(UInt8(ascii: ","))
            return byte(UInt8(ascii: "]")) ? elements : nil
        }

        /// A JSON string: valid UTF-8, no raw control character, escapes as JSON has
        /// them (a `\u` of a lone surrogate is nil).
        public mutating func string() -> String? {
            guard byte(UInt8(ascii: "\"")) else { return nil }
            let start = index
            // Most strings hold no escape: their bytes as they are.
            guard let (end, ascii) = plainRun() else { return nil }
            if bytes[end] == UInt8(ascii: "\"") {
                index = end + 1
                return Self.text(bytes[start..<end], ascii: ascii)
            }
            return escapedString(from: start)
        }

        /// Moves past a JSON string exactly where ``string()`` reads one, without making
        /// it (only one that is not ASCII is checked as UTF-8, as `string()` checks it):
        /// true where `string()` gives a string.
        public mutating func skipString() -> Bool {
            guard byte(UInt8(ascii: "\"")) else { return false }
            let start = index
            guard let (end, ascii) = plainRun() else { return false }
            if bytes[end] == UInt8(ascii: "\"") {
                guard ascii || String(validating: bytes[start..<end], as: UTF8.self) != nil else { return false }
                index = end + 1
                return true
            }
            return escapedString(from: start) != nil
        }

        /// Moves past a JSON number without reading its value: `-`, an integer part without
        /// leading zeros, an optional fraction, and no exponent (false for one: a caller that
        /// must know whether such a number is finite reads it with ``double()``); at most 32
        /// bytes, so what it passes is always a finite `Double`.
        public mutating func skipPlainNumber() -> Bool {
            let start = index
            func digits() -> Int {
                let first = index
                while index < bytes.endIndex, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") { index += 1 }
                return index - first
            }
            _ = byte(UInt8(ascii: "-"))
            let integer = index
            let count = digits()
            guard count > 0, count == 1 || bytes[integer] != UInt8(ascii: "0") else { return false }
            if byte(UInt8(ascii: ".")), digits() == 0 { return false }
            if index < bytes.endIndex, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") { return false }
            return index - start <= 32
        }

        /// A string as it stands in the input, quotes included and escapes not undone: the
        /// bytes from its opening quote to its closing one (the first quote not escaped by a
        /// backslash), which the reader moves past; nil when the input ends first. Nothing
        /// inside is checked: `string()` on these bytes checks them. For a reader that has
        /// seen the same bytes before and kept what they said (``BeaconCodec``).
        public mutating func quotedString() -> ArraySlice<UInt8>? {
            let start = index
            guard byte(UInt8(ascii: "\"")) else { return nil }
            let first = index - bytes.startIndex
            let end: Int? = bytes.withUnsafeBufferPointer { input in
                var at = first
                while at < input.count {
                    let byte = input[at]
                    if byte == UInt8(ascii: "\"") { return at }
                    at += byte == UInt8(ascii: "\\") ? 2 : 1
                }
                return nil
            }
            guard let end else { return nil }
            index = bytes.startIndex + end + 1
            return bytes[start..<index]
        }

        /// The rest of a string that holds escapes, from `start` (just after its opening
        /// quote), unescaped in one pass into one buffer as long as the input left (no
        /// escape stands for more bytes than it takes).
        private mutating func escapedString(from start: Int) -> String? {
            let first = start - bytes.startIndex
            var after: Int?
            var ascii = true
            var failed = false
            let text = bytes.withUnsafeBufferPointer { input in
                [UInt8](unsafeUninitializedCapacity: input.count - first) { output, count in
                    var at = first
                    loop: while at < input.count {
                        let byte = input[at]
                        at += 1
                        switch byte {
                        case UInt8(ascii: "\""):
                            after = at
                            break loop
                        case UInt8(ascii: "\\"):
                            guard at < input.count else {
                                failed = true
                                break loop
                            }
                            let escape = input[at]
                            at += 1
                            let unescaped: UInt8
                            switch escape {
                            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): unescaped = escape
                            case UInt8(ascii: "b"): unescaped = 0x08
                            case UInt8(ascii: "f"): unescaped = 0x0C
                            case UInt8(ascii: "n"): unescaped = 0x0A
                            case UInt8(ascii: "r"): unescaped = 0x0D
                            case UInt8(ascii: "t"): unescaped = 0x09
                            case UInt8(ascii: "u"):
                                guard let unit = Self.hex4(input, at: &at) else {
                                    failed = true
                                    break loop
                                }
                                var scalar = UInt32(unit)
                                if (0xD800..<0xDC00).contains(unit) {
                                    guard input.count - at >= 2, input[at] == UInt8(ascii: "\\"), input[at + 1] == UInt8(ascii: "u") else {
                                        failed = true
                                        break loop
                                    }
                                    at += 2
                                    guard let low = Self.hex4(input, at: &at), (0xDC00..<0xE000).contains(low) else {
                                        failed = true
                                        break loop
                                    }
                                    scalar = 0x10000 + (UInt32(unit - 0xD800) << 10) + UInt32(low - 0xDC00)
                                } else if (0xDC00..<0xE000).contains(unit) {
                                    failed = true
                                    break loop
                                }
                                guard let character = Unicode.Scalar(scalar) else {
                                    failed = true
                                    break loop
                                }
                                ascii = ascii && character.isASCII
                                UTF8.encode(character) { unit in
                                    output[count] = unit
                                    count += 1
                                }
                                continue loop
                            default:
                                failed = true
                                break loop
                            }
                            output[count] = unescaped
                            count += 1
                        case 0..<0x20:
                            failed = true
                            break loop
                        default:
                            ascii = ascii && byte < 0x80
                            output[count] = byte
                            count += 1
                        }
                    }
                }
            }
            guard !failed, let after else { return nil }
            index = bytes.startIndex + after
            return Self.text(text[...], ascii: ascii)
        }

        /// Four hex digits at `at` in `input` (moved past them), or nil.
        private static func hex4(_ input: UnsafeBufferPointer<UInt8>, at: inout Int) -> UInt16? {
            guard input.count - at >= 4 else { return nil }
            var value: UInt16 = 0
            for _ in 0..<4 {
                let byte = input[at]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: return nil
                }
                value = value << 4 | UInt16(digit)
                at += 1
            }
            return value
        }

        /// From ``index``, the bytes before the next quote or backslash: where that byte
        /// is, and whether they are all ASCII; nil at a raw control character or when the
        /// input ends first.
        private func plainRun() -> (end: Int, ascii: Bool)? {
            var at = index
            var high: UInt8 = 0
            while at < bytes.endIndex {
                let byte = bytes[at]
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return (at, high < 0x80) }
                guard byte >= 0x20 else { return nil }
                high |= byte
                at += 1
            }
            return nil
        }

        /// `utf8` as a string: checked as UTF-8 unless it is all ASCII (which is).
        private static func text(_ utf8: ArraySlice<UInt8>, ascii: Bool) -> String? {
            ascii ? String(decoding: utf8, as: UTF8.self) : String(validating: utf8, as: UTF8.self)
        }
    }
}
