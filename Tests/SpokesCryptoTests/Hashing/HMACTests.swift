import Testing
import SpokesCrypto

/// The RFC 4231 test vectors for HMAC-SHA-256.
@Suite struct HMACTests {
    static let largeKey = [UInt8](repeating: 0xaa, count: 131)

    @Test(arguments: [
        ([UInt8](repeating: 0x0b, count: 20), Array("Hi There".utf8),
         "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        (Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        ([UInt8](repeating: 0xaa, count: 20), [UInt8](repeating: 0xdd, count: 50),
         "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
        (Array(1...25), [UInt8](repeating: 0xcd, count: 50),
         "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
        (largeKey, Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        (largeKey, Array("This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.".utf8),
         "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
    ] as [([UInt8], [UInt8], String)])
    func matchesTheRFC4231Vectors(key: [UInt8], data: [UInt8], tag: String) {
        let hmac = HMAC(key: key)
        #expect(hmac.authenticationCode(for: data).hex == tag)
        #expect(hmac.isValid([UInt8](hex: tag), for: data))
    }

    @Test func matchesTheTruncatedVectorOfTestCase5() {
        let tag = HMAC(key: [UInt8](repeating: 0x0c, count: 20)).authenticationCode(for: Array("Test With Truncation".utf8))
        #expect(tag.prefix(16).hex == "a3b6167473100ee06e0c796c2955552b")
    }

    @Test func rejectsATagWithAnyByteChanged() {
        let hmac = HMAC(key: Array("Jefe".utf8))
        let message = Array("what do ya want for nothing?".utf8)
        let tag = hmac.authenticationCode(for: message)
        for index in tag.indices {
            var forged = tag
            forged[index] ^= 0x01
            #expect(!hmac.isValid(forged, for: message), "byte \(index)")
        }
        #expect(!hmac.isValid(tag.dropLast(), for: message))
        #expect(!hmac.isValid([], for: message))
    }

    @Test func tagsAMessageInPartsLikeTheWholeMessage() {
        let hmac = HMAC(key: Array("key".utf8))
        let parts = hmac.authenticationCode { hasher in
            hasher.update(Array("hello, ".utf8))
            hasher.update(Array("world".utf8))
        }
        #expect(parts == hmac.authenticationCode(for: Array("hello, world".utf8)))
    }

    @Test func comparesInConstantTimeOnlyEqualLengths() {
        #expect(constantTimeEquals([1, 2, 3], [1, 2, 3]))
        #expect(!constantTimeEquals([1, 2, 3], [1, 2, 4]))
        #expect(!constantTimeEquals([1, 2, 3], [1, 2]))
        #expect(constantTimeEquals([UInt8](), [UInt8]()))
    }
}
