/// HMAC-SHA256 (RFC 2104) with a fixed key.
///
/// The key's inner and outer pads are absorbed once, at init; each ``authenticationCode(for:)``
/// then starts from copies of those two hash states, which halves the work for the
/// short frames a connection authenticates.
public struct HMAC: Sendable {
    private let inner: SHA256
    private let outer: SHA256

    public init<Key: Collection<UInt8>>(key: Key) {
        var block = key.count > SHA256.blockSize ? SHA256.hash(key) : Array(key)
        block += [UInt8](repeating: 0, count: SHA256.blockSize - block.count)
        var inner = SHA256()
        inner.update(block.map { $0 ^ 0x36 })
        var outer = SHA256()
        outer.update(block.map { $0 ^ 0x5c })
        self.inner = inner
        self.outer = outer
    }

    /// The 32-byte tag of `message`.
    public func authenticationCode<Bytes: Sequence<UInt8>>(for message: Bytes) -> [UInt8] {
        authenticationCode { $0.update(message) }
    }

    /// The tag of the concatenation of whatever `write` feeds the hasher, so that a
    /// message made of parts needs no copy into one buffer.
    public func authenticationCode(_ write: (inout SHA256) -> Void) -> [UInt8] {
        var hasher = inner
        write(&hasher)
        var finishing = outer
        finishing.update(hasher.finalize())
        return finishing.finalize()
    }

    /// Whether `tag` is the tag of `message`, compared in constant time.
    public func isValid<Bytes: Sequence<UInt8>, Tag: Collection<UInt8>>(_ tag: Tag, for message: Bytes) -> Bool {
        constantTimeEquals(authenticationCode(for: message), tag)
    }
}
