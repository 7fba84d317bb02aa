/// Limits on the shape of JSON text, checked by a single scan before any decoding, so
/// that a hostile document cannot make the decoder recurse or allocate without bound.
///
/// Sans-IO: it tracks only whether it is inside a string and one integer per open
/// container (at most `maximumDepth` of them), so its own memory is bounded too.
public struct JSONShapeLimits: Sendable, Hashable {
    public var maximumDepth: Int
    public var maximumArrayLength: Int

    public init(maximumDepth: Int, maximumArrayLength: Int) {
        self.maximumDepth = maximumDepth
        self.maximumArrayLength = maximumArrayLength
    }

    public enum Violation: Error, Sendable, Equatable, CustomStringConvertible {
        case tooDeep(limit: Int)
        case arrayTooLong(limit: Int)

        public var description: String {
            switch self {
            case .tooDeep(let limit): "JSON nested deeper than \(limit) levels"
            case .arrayTooLong(let limit): "JSON array longer than \(limit) elements"
            }
        }

        public var rejection: Rejection {
            switch self {
            case .tooDeep: .jsonTooDeep
            case .arrayTooLong: .arrayTooLong
            }
        }
    }

    /// Throws if `json` nests deeper or holds a longer array than allowed. Malformed JSON
    /// passes: the decoder reports it better.
    public func check<Bytes: Collection<UInt8>>(_ json: Bytes) throws(Violation) {
        // Over the bytes in place where they are contiguous (every frame and argument).
        let found = json.withContiguousStorageIfAvailable { violation(in: $0) } ?? Array(json).withUnsafeBufferPointer { violation(in: $0) }
        if let found { throw found }
    }

    private func violation(in json: UnsafeBufferPointer<UInt8>) -> Violation? {
        // Per open container: -1 for an object, else the elements seen so far in an array
        // (counted at each element's first byte).
        var open: [Int] = []
        var expectingElement = false
        var next = 0
        while next < json.count {
            let byte = json[next]
            next += 1
            let isSpace = byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
            if expectingElement, !isSpace, byte != UInt8(ascii: "]") {
                expectingElement = false
                open[open.count - 1] += 1
                if open[open.count - 1] > maximumArrayLength { return .arrayTooLong(limit: maximumArrayLength) }
            }
            switch byte {
            case UInt8(ascii: "\""):
                // The string's bytes, skipped to its closing quote (an escaped byte is not
                // one): sixteen at a time while none is a quote or a backslash.
                while true {
                    next = Self.skipPlain16(json, from: next)
                    guard next < json.count else { break }
                    let inside = json[next]
                    next &+= inside == UInt8(ascii: "\\") ? 2 : 1
                    if inside == UInt8(ascii: "\"") { break }
                }
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                guard open.count < maximumDepth else { return .tooDeep(limit: maximumDepth) }
                open.append(byte == UInt8(ascii: "[") ? 0 : -1)
                expectingElement = byte == UInt8(ascii: "[")
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                expectingElement = false
                if !open.isEmpty { open.removeLast() }
            case UInt8(ascii: ","):
                expectingElement = open.last.map { $0 >= 0 } ?? false
            default:
                break
            }
        }
        return nil
    }

    /// From `start`, past every whole run of sixteen bytes holding no quote and no
    /// backslash: where the bytes to look at one by one begin.
    private static func skipPlain16(_ json: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        guard let base = json.baseAddress else { return start }
        // Made here, not static: a static is a `swift_once` call at every use.
        let quotes = SIMD16<UInt8>(repeating: UInt8(ascii: "\"")), backslashes = SIMD16<UInt8>(repeating: UInt8(ascii: "\\"))
        var next = start
        while json.count - next >= 16 {
            let chunk = UnsafeRawPointer(base + next).loadUnaligned(as: SIMD16<UInt8>.self)
            if any((chunk .== quotes) .| (chunk .== backslashes)) { break }
            next &+= 16
        }
        return next
    }
}
