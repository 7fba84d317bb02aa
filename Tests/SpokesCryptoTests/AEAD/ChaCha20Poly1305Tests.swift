import SpokesTestKit
import Testing
@testable import SpokesCrypto

/// AEAD_CHACHA20_POLY1305 against RFC 8439 §2.8.2 and A.5, and what `open` refuses.
@Suite struct ChaCha20Poly1305Tests {
    @Test(arguments: RFC8439.aeads)
    func sealsAndOpensTheRFCVectors(_ vector: RFC8439.AEAD) throws {
        let aead = try #require(ChaCha20Poly1305(key: vector.key))
        let nonce = try #require(ChaCha20.Nonce(vector.nonce))
        #expect(aead.seal(vector.plaintext, nonce: nonce, authenticating: vector.aad) == vector.ciphertext + vector.tag)
        #expect(aead.open(vector.ciphertext + vector.tag, nonce: nonce, authenticating: vector.aad) == vector.plaintext)
    }

    @Test func refusesEveryBitFlippedInTheCiphertextOrTheTag() throws {
        let vector = RFC8439.aeads[0]
        let aead = try #require(ChaCha20Poly1305(key: vector.key))
        let nonce = try #require(ChaCha20.Nonce(vector.nonce))
        let sealed = vector.ciphertext + vector.tag
        for index in sealed.indices {
            for bit in 0..<8 {
                var forged = sealed
                forged[index] ^= 1 << bit
                #expect(aead.open(forged, nonce: nonce, authenticating: vector.aad) == nil, "byte \(index) bit \(bit)")
            }
        }
    }

    @Test func refusesAnotherNonceOtherAssociatedDataOrATruncatedMessage() throws {
        let vector = RFC8439.aeads[0]
        let aead = try #require(ChaCha20Poly1305(key: vector.key))
        let nonce = try #require(ChaCha20.Nonce(vector.nonce))
        let sealed = vector.ciphertext + vector.tag
        #expect(aead.open(sealed, nonce: ChaCha20.Nonce(counter: 1), authenticating: vector.aad) == nil)
        #expect(aead.open(sealed, nonce: nonce, authenticating: vector.aad.dropLast()) == nil)
        #expect(aead.open(sealed, nonce: nonce) == nil)
        #expect(aead.open(sealed.dropLast(), nonce: nonce, authenticating: vector.aad) == nil)
        #expect(aead.open(sealed.dropFirst(), nonce: nonce, authenticating: vector.aad) == nil)
        #expect(aead.open(sealed + [0], nonce: nonce, authenticating: vector.aad) == nil)
        #expect(aead.open(vector.tag.dropLast(), nonce: nonce, authenticating: vector.aad) == nil)
        #expect(aead.open([UInt8](), nonce: nonce, authenticating: vector.aad) == nil)
    }

    @Test func roundTripsEveryLengthAroundTheBlockSizes() throws {
        var generator = TestGenerator(seed: 8439)
        let key = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let aead = try #require(ChaCha20Poly1305(key: key))
        for count in [0, 1, 15, 16, 17, 63, 64, 65, 1000] {
            let plaintext = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let aad = (0..<(count % 21)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let nonce = ChaCha20.Nonce(counter: UInt64(count))
            let sealed = aead.seal(plaintext[...], nonce: nonce, authenticating: aad)
            #expect(sealed.count == count + ChaCha20Poly1305.tagSize)
            #expect(aead.open(sealed[...], nonce: nonce, authenticating: aad) == plaintext, "\(count) bytes")
        }
    }
}
