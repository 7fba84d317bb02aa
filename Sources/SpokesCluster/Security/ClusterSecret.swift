import FoundationEssentials
import Glibc
import SpokesConcurrency

/// The secret every member of a cluster holds. It authenticates beacons, connections
/// and every frame (see SECURITY.md); it is never sent, logged or printed.
///
/// `description` shows only a fingerprint (a hash prefix), so a secret that ends up in
/// string interpolation by mistake still does not leak; two nodes whose fingerprints
/// differ do not hold the same secret.
public struct ClusterSecret: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// Shortest secret accepted, in bytes.
    public static let minimumLength = 16

    private let bytes: [UInt8]

    /// A secret from its text; `source` names where it came from, for errors.
    /// Surrounding whitespace (such as a file's final newline) is not part of it.
    public init(_ text: String, source: String) throws(SecurityError) {
        let trimmed = Array(text.trimmingWhitespace().utf8)
        guard trimmed.count >= Self.minimumLength else { throw .secretTooShort(source: source, length: trimmed.count) }
        bytes = trimmed
    }

    /// Reads the secret from `path`, which only its owner may read (like an SSH key).
    public static func read(file path: String) throws(SecurityError) -> ClusterSecret {
        switch PrivateFile.problem(at: path) {
        case nil: break
        case .absent: throw .unreadableSecretFile(path: path, reason: String(cString: strerror(ENOENT)))
        case .unreadable(let reason): throw .unreadableSecretFile(path: path, reason: reason)
        case .notRegular: throw .unreadableSecretFile(path: path, reason: "it is not a regular file")
        case .tooOpen(let mode): throw .secretFileTooOpen(path: path, mode: mode)
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .unreadableSecretFile(path: path, reason: "permission denied")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw .unreadableSecretFile(path: path, reason: "it is not UTF-8 text")
        }
        return try ClusterSecret(text, source: path)
    }

    /// Text for a new secret: 32 random bytes from the system's generator, as 64 hex digits.
    public static func generateText() -> String {
        randomBytes(32).hex
    }

    /// The secret's text. Only for handing it to a node inside a sealed frame
    /// (`spokes keyring install`); never print or log it.
    public func revealText() -> String {
        String(decoding: bytes, as: UTF8.self)
    }

    /// Eight hex digits that identify the secret without revealing it.
    public var fingerprint: String {
        String(HMAC(key: bytes).authenticationCode(for: Array("spokes fingerprint".utf8)).prefix(4).hex)
    }

    public var description: String { "ClusterSecret(fingerprint: \(fingerprint))" }
    public var debugDescription: String { description }

    /// What a derived key is for; each purpose gets its own key, so a tag made for one
    /// can never pass as a tag for another.
    enum Purpose: String {
        case handshake = "spokes/1 handshake"
        case dashboard = "spokes/1 dashboard"
        /// Beacons' contents, sealed (``SealedBox``).
        case beaconContents = "spokes/1 beacon contents"
        /// Probes' contents, sealed.
        case probeContents = "spokes/1 probe contents"
        /// A connection's frames before its handshake ends, sealed.
        case handshakeFrames = "spokes/1 handshake frames"
    }

    /// The token that opens every node's dashboard in this cluster: 32 hex digits derived
    /// from the secret for the dashboard alone, so it reveals nothing of the secret and
    /// proves nothing to a node's cluster port.
    public var dashboardToken: String {
        String(HMAC(key: bytes).authenticationCode(for: Array(Purpose.dashboard.rawValue.utf8)).prefix(16).hex)
    }

    /// Whether `token` is this cluster's dashboard token (compared in constant time).
    public func isDashboardToken(_ token: String) -> Bool {
        constantTimeEquals(Array(token.utf8), Array(dashboardToken.utf8))
    }

    /// The 32-byte encryption key for `purpose`: HKDF-SHA256 of the secret, with the
    /// purpose as its info (RFC 5869).
    func encryptionKey(for purpose: Purpose) -> [UInt8] {
        // 32 bytes is far below HKDF's 8,160-byte limit: never nil.
        HKDF.deriveKey(inputKeyMaterial: bytes, salt: Array("spokes/1".utf8), info: Array(purpose.rawValue.utf8), outputCount: 32)!
    }

    /// The key for `purpose`: HMAC(secret, purpose).
    func key(for purpose: Purpose) -> HMAC {
        HMAC(key: HMAC(key: bytes).authenticationCode(for: Array(purpose.rawValue.utf8)))
    }
}


/// Fresh random bytes from the system's generator (getrandom on Linux), eight from each
/// draw (a byte per draw made one system call per byte: a beacon's nonce was 16 calls).
func randomBytes(_ count: Int) -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count)
    while bytes.count < count {
        let word = generator.next()
        for shift in stride(from: 0, to: min(8, count - bytes.count) * 8, by: 8) { bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
    }
    return bytes
}
