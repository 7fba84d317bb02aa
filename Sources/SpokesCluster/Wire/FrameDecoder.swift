/// Splits a byte stream into frames: a 4-byte big-endian length, then that many bytes.
///
/// Sans-IO: feed it whatever bytes arrived, then take complete frames out. It never
/// reads a socket and never allocates more than `maximumFrameSize` plus one read's worth
/// per frame, because a length over the limit is an error as soon as the 4 length bytes
/// are in, before any payload is buffered.
public struct FrameDecoder: Sendable {
    /// Why the stream cannot be framed. The connection should be closed.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        case frameTooLarge(length: Int, limit: Int)

        public var description: String {
            switch self {
            case .frameTooLarge(let length, let limit):
                "frame of \(length) bytes exceeds the limit of \(limit) bytes"
            }
        }
    }

    /// Frames longer than this are an error; may change between frames (it grows once a handshake is done).
    public var maximumFrameSize: Int
    private var buffer: [UInt8] = []
    private var start = 0

    public init(maximumFrameSize: Int) {
        self.maximumFrameSize = maximumFrameSize
    }

    /// Bytes received but not yet returned as a frame.
    public var bufferedByteCount: Int { buffer.count - start }

    public mutating func feed<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
        if start > 0, start * 2 >= buffer.count {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete frame's payload, or nil when more bytes are needed.
    public mutating func nextFrame() throws(Failure) -> [UInt8]? {
        guard bufferedByteCount >= 4 else { return nil }
        let length = buffer[start..<start + 4].reduce(0) { $0 << 8 | Int($1) }
        guard length <= maximumFrameSize else { throw .frameTooLarge(length: length, limit: maximumFrameSize) }
        guard bufferedByteCount >= 4 + length else { return nil }
        let payload = Array(buffer[start + 4..<start + 4 + length])
        start += 4 + length
        return payload
    }

    /// A frame around `payload`: its length as 4 big-endian bytes, then the payload.
    public static func frame<Bytes: Collection<UInt8>>(_ payload: Bytes) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(4 + payload.count)
        append(frameOf: payload, to: &bytes)
        return bytes
    }

    /// ``frame(_:)`` of `payload` at the end of `bytes` (no frame of its own to copy).
    public static func append<Bytes: Collection<UInt8>>(frameOf payload: Bytes, to bytes: inout [UInt8]) {
        let length = UInt32(payload.count)
        for shift: UInt32 in [24, 16, 8, 0] { bytes.append(UInt8(length >> shift & 0xFF)) }
        bytes.append(contentsOf: payload)
    }
}
