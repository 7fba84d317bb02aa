/// Authenticates the frames of one direction of a connection, sans-IO.
///
/// Each sealed frame is the payload followed by a 32-byte tag,
/// `HMAC(sessionKey, sequence ‖ payload)`, where the sequence number counts the frames of
/// this direction from 0 and is implicit: both ends count. A forged frame fails its tag;
/// a replayed, dropped or reordered frame is checked against the wrong sequence number
/// and fails too; a frame from another session fails because the key differs.
struct FrameAuthenticator: Sendable {
    static let tagSize = SHA256.digestSize

    private let key: HMAC
    /// The sequence number of the next frame to seal or open.
    private(set) var sequence: UInt64 = 0

    init(key: HMAC) {
        self.key = key
    }

    /// `payload` with its tag appended.
    mutating func seal(_ payload: [UInt8]) -> [UInt8] {
        let tag = tag(payload[...])
        sequence &+= 1
        return payload + tag
    }

    /// The payload of `frame` if its tag is right for the next sequence number; nil (and
    /// the sequence unchanged) otherwise.
    mutating func open(_ frame: [UInt8]) -> ArraySlice<UInt8>? {
        guard frame.count >= Self.tagSize else { return nil }
        let payload = frame[..<(frame.count - Self.tagSize)]
        guard constantTimeEquals(tag(payload), frame[(frame.count - Self.tagSize)...]) else { return nil }
        sequence &+= 1
        return payload
    }

    private func tag(_ payload: ArraySlice<UInt8>) -> [UInt8] {
        key.authenticationCode { hasher in
            hasher.update((0..<8).map { UInt8(truncatingIfNeeded: sequence >> UInt64(56 - 8 * $0)) })
            hasher.update(payload)
        }
    }
}
