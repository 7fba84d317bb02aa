/// HKDF with HMAC-SHA256 (RFC 5869): keys from keying material.
///
/// What: ``extract(salt:inputKeyMaterial:)`` concentrates the input's entropy into a 32-byte
/// pseudorandom key; ``expand(pseudorandomKey:info:outputCount:)`` stretches that key into
/// as many bytes as asked, a different stream for each `info`; ``deriveKey(inputKeyMaterial:salt:info:outputCount:)``
/// does both.
/// Why: one secret gives many independent keys (per connection, per direction, per
/// purpose) without any of them revealing the secret or each other.
/// Invariant: at most 255 × 32 bytes come from one pseudorandom key; a request for more,
/// a negative count or a pseudorandom key shorter than 32 bytes gets nil, never a short or
/// repeating output.
public enum HKDF {
    /// The most bytes one expansion gives: 255 blocks of SHA-256's size.
    public static let maximumOutputCount = 255 * SHA256.digestSize

    /// HKDF-Extract: `HMAC(salt, inputKeyMaterial)`, 32 bytes. An empty salt stands for 32
    /// zero bytes, as the RFC says (HMAC pads both to the same block).
    public static func extract<Salt: Collection<UInt8>, Material: Sequence<UInt8>>(
        salt: Salt, inputKeyMaterial: Material
    ) -> [UInt8] {
        HMAC(key: salt).authenticationCode(for: inputKeyMaterial)
    }

    /// HKDF-Expand: the first `outputCount` bytes of T(1) ‖ T(2) ‖ …, where
    /// T(i) = HMAC(pseudorandomKey, T(i−1) ‖ info ‖ i). Nil when `outputCount` is negative or
    /// above ``maximumOutputCount``, or the key is shorter than 32 bytes.
    public static func expand<Key: Collection<UInt8>, Info: Collection<UInt8>>(
        pseudorandomKey: Key, info: Info, outputCount: Int
    ) -> [UInt8]? {
        guard pseudorandomKey.count >= SHA256.digestSize, (0...maximumOutputCount).contains(outputCount) else { return nil }
        let hmac = HMAC(key: pseudorandomKey)
        let info = Array(info)
        var output: [UInt8] = []
        output.reserveCapacity(outputCount)
        var previous: [UInt8] = []
        var counter: UInt8 = 1
        while output.count < outputCount {
            previous = hmac.authenticationCode { hasher in
                hasher.update(previous)
                hasher.update(info)
                hasher.update(CollectionOfOne(counter))
            }
            output += previous.prefix(outputCount - output.count)
            counter &+= 1
        }
        return output
    }

    /// Extract then expand: `outputCount` bytes of key from `inputKeyMaterial`, bound to
    /// `salt` and `info`. Nil exactly when ``expand(pseudorandomKey:info:outputCount:)`` is.
    public static func deriveKey<Material: Sequence<UInt8>, Salt: Collection<UInt8>, Info: Collection<UInt8>>(
        inputKeyMaterial: Material, salt: Salt, info: Info, outputCount: Int
    ) -> [UInt8]? {
        expand(pseudorandomKey: extract(salt: salt, inputKeyMaterial: inputKeyMaterial), info: info, outputCount: outputCount)
    }
}
