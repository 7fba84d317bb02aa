/// Seals and opens the frames of one connection, sans-IO: each frame encrypted and
/// authenticated with ChaCha20-Poly1305 under a key of its direction.
///
/// What: one side of a connection holds one `FrameSeal`. ``seal(_:)`` turns a payload into
/// a frame (ciphertext ‖ 16-byte tag) under the key of the direction this side sends in;
/// ``open(_:)`` turns the peer's next frame back into its payload under the key of the
/// other direction. Frames carry no number: both ends count the frames of each direction
/// from 0, and a frame's number is its nonce (``ChaCha20/Nonce/init(prefix:counter:)``).
///
/// Keys: `PRK = HKDF-Extract(salt: len ‖ dialer's nonce ‖ len ‖ acceptor's nonce, secret)`,
/// then one 32-byte key per direction, `HKDF-Expand(PRK, "spokes/1 frames dialler to acceptor")`
/// and `HKDF-Expand(PRK, "spokes/1 frames acceptor to dialler")`. Both handshake nonces are in
/// every key, so a connection's keys are fresh whenever either side's nonce is, and a
/// frame from another connection, or from this one in the other direction (reflected back
/// to its sender), fails its tag.
///
/// The two directions share nothing but the keys' origin: sealing moves only
/// ``sentFrames``, opening only ``receivedFrames``. So a connection whose writer and reader
/// run apart (as `Connection`'s write queue and reader thread do) may give each its own
/// copy of one `FrameSeal`, the writer's only sealing and the reader's only opening.
///
/// Why: to replace `FrameAuthenticator`'s HMAC, which proves a frame's origin but leaves
/// its bytes readable on the wire (issue 31).
///
/// Invariants:
/// - A nonce never repeats under a key: each direction's counter only goes up, and
///   ``seal(_:)`` refuses (``Exhausted``) once 2^64 − 1 frames are sealed instead of wrapping.
/// - ``open(_:)`` accepts only the next frame of the peer's direction, whole and unaltered:
///   a replayed or reordered frame, one that comes after a lost one, or a truncated,
///   extended, altered or reflected frame fails the tag check and returns nil, leaving the
///   counter where it was. It never says why (no oracle); the caller closes the connection.
public struct FrameSeal: Sendable {
    /// Which end of the connection this side is: both ends derive the same two keys and
    /// the role says which one this side seals with and which one it opens with.
    public enum Role: Sendable {
        /// The side that opened the connection (sent `hello`).
        case dialer
        /// The side that accepted it (sent `welcome`).
        case acceptor
    }

    /// ``seal(_:)`` refused: this direction has sealed 2^64 − 1 frames, and one more
    /// would repeat a nonce. The connection must be replaced (a new handshake, new keys).
    public struct Exhausted: Error, Equatable {}

    /// Bytes a frame adds to its payload: the tag.
    public static let overhead = ChaCha20Poly1305.tagSize

    private let sending: ChaCha20Poly1305
    private let receiving: ChaCha20Poly1305
    /// The number of the next frame this side seals.
    public private(set) var sentFrames: UInt64
    /// The number of the next frame this side expects to open.
    public private(set) var receivedFrames: UInt64

    /// The seal of one side of a connection: `secret` is the cluster's secret (or a key
    /// derived from it for frames), and the two nonces are those the handshake exchanged,
    /// the same bytes on both sides.
    ///
    /// - Precondition: `secret` and both nonces are not empty.
    public init<Secret: Collection<UInt8>, DialerNonce: Collection<UInt8>, AcceptorNonce: Collection<UInt8>>(
        secret: Secret, dialerNonce: DialerNonce, acceptorNonce: AcceptorNonce, role: Role
    ) {
        self.init(secret: secret, dialerNonce: dialerNonce, acceptorNonce: acceptorNonce, role: role, sentFrames: 0, receivedFrames: 0)
    }

    /// As the public initializer, with the counters starting elsewhere (tests reach the end).
    init<Secret: Collection<UInt8>, DialerNonce: Collection<UInt8>, AcceptorNonce: Collection<UInt8>>(
        secret: Secret, dialerNonce: DialerNonce, acceptorNonce: AcceptorNonce, role: Role, sentFrames: UInt64, receivedFrames: UInt64
    ) {
        let keys = Self.directionKeys(secret: secret, dialerNonce: dialerNonce, acceptorNonce: acceptorNonce)
        let (send, receive) = role == .dialer ? (keys.dialerToAcceptor, keys.acceptorToDialer) : (keys.acceptorToDialer, keys.dialerToAcceptor)
        sending = ChaCha20Poly1305(key: send)!
        receiving = ChaCha20Poly1305(key: receive)!
        self.sentFrames = sentFrames
        self.receivedFrames = receivedFrames
    }

    /// The frame of `payload`: its ciphertext then its tag, ``overhead`` bytes longer.
    public mutating func seal<Payload: Collection<UInt8>>(_ payload: Payload) throws(Exhausted) -> [UInt8] {
        guard sentFrames < UInt64.max else { throw Exhausted() }
        let frame = sending.seal(payload, nonce: ChaCha20.Nonce(counter: sentFrames))
        sentFrames += 1
        return frame
    }

    /// The payload of `frame` if it is the peer's next frame, whole and unaltered; nil
    /// otherwise, with nothing changed.
    public mutating func open<Frame: Collection<UInt8>>(_ frame: Frame) -> [UInt8]? {
        guard receivedFrames < UInt64.max,
              let payload = receiving.open(frame, nonce: ChaCha20.Nonce(counter: receivedFrames)) else { return nil }
        receivedFrames += 1
        return payload
    }

    /// The 32-byte keys of the connection's two directions.
    static func directionKeys<Secret: Collection<UInt8>, DialerNonce: Collection<UInt8>, AcceptorNonce: Collection<UInt8>>(
        secret: Secret, dialerNonce: DialerNonce, acceptorNonce: AcceptorNonce
    ) -> (dialerToAcceptor: [UInt8], acceptorToDialer: [UInt8]) {
        precondition(!secret.isEmpty && !dialerNonce.isEmpty && !acceptorNonce.isEmpty, "FrameSeal: an empty secret or nonce")
        // Each nonce length-prefixed, so no two different pairs make the same salt.
        let salt = lengthPrefixed(dialerNonce) + lengthPrefixed(acceptorNonce)
        let pseudorandomKey = HKDF.extract(salt: salt, inputKeyMaterial: secret)
        func key(_ label: String) -> [UInt8] {
            HKDF.expand(pseudorandomKey: pseudorandomKey, info: Array(label.utf8), outputCount: ChaCha20Poly1305.keySize)!
        }
        return (key("spokes/1 frames dialler to acceptor"), key("spokes/1 frames acceptor to dialler"))
    }

    private static func lengthPrefixed<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> [UInt8] {
        let count = UInt32(bytes.count)
        return [UInt8(count >> 24), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF)] + bytes
    }
}
