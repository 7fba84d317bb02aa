/// Little-endian writing of the storage's binary fields.
struct BinaryWriter {
    var bytes: [UInt8] = []

    mutating func write(_ value: UInt8) { bytes.append(value) }

    mutating func write(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    mutating func write(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    mutating func write(_ value: Int) { write(UInt64(bitPattern: Int64(value))) }

    /// A length-prefixed UTF-8 string.
    mutating func write(_ value: String) {
        let utf8 = Array(value.utf8)
        write(UInt32(utf8.count))
        bytes.append(contentsOf: utf8)
    }
}

/// Reading what `BinaryWriter` wrote, failing (never trapping) on short or bad input.
struct BinaryReader {
    struct Failure: Error {
        var reason: String
    }

    private let bytes: ArraySlice<UInt8>
    private(set) var position: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        position = bytes.startIndex
    }

    var isAtEnd: Bool { position == bytes.endIndex }

    private mutating func take(_ count: Int, _ what: String) throws(Failure) -> ArraySlice<UInt8> {
        guard count >= 0, bytes.endIndex - position >= count else { throw Failure(reason: "\(what) runs past the end") }
        defer { position += count }
        return bytes[position..<(position + count)]
    }

    mutating func readByte(_ what: String) throws(Failure) -> UInt8 {
        try take(1, what).first!
    }

    mutating func readUInt32(_ what: String) throws(Failure) -> UInt32 {
        try take(4, what).reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }

    mutating func readUInt64(_ what: String) throws(Failure) -> UInt64 {
        try take(8, what).reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// A non-negative integer no larger than `RaftMessage.maximumNumber`.
    mutating func readCount(_ what: String) throws(Failure) -> Int {
        let value = try readUInt64(what)
        guard value <= UInt64(RaftMessage.maximumNumber) else { throw Failure(reason: "\(what) \(value) is out of range") }
        return Int(value)
    }

    mutating func readString(_ what: String) throws(Failure) -> String {
        let length = Int(try readUInt32("\(what) length"))
        let utf8 = try take(length, what)
        guard let string = String(validating: utf8, as: UTF8.self) else { throw Failure(reason: "\(what) is not UTF-8") }
        return string
    }

    /// Everything left, as a UTF-8 string.
    mutating func readRemainingString(_ what: String) throws(Failure) -> String {
        let utf8 = try take(bytes.endIndex - position, what)
        guard let string = String(validating: utf8, as: UTF8.self) else { throw Failure(reason: "\(what) is not UTF-8") }
        return string
    }
}
