import SpokesTestKit
import Testing
@testable import SpokesCrypto

/// ChaCha20 against RFC 8439's block, encryption and one-time-key vectors, and the
/// properties the AEAD relies on.
@Suite struct ChaCha20Tests {
    @Test(arguments: RFC8439.blocks)
    func blockFunctionMatchesTheRFCVectors(_ vector: RFC8439.Block) throws {
        let cipher = try #require(ChaCha20(key: vector.key))
        let nonce = try #require(ChaCha20.Nonce(vector.nonce))
        #expect(cipher.block(counter: vector.counter, nonce: nonce) == vector.output)
    }

    @Test(arguments: RFC8439.encryptions)
    func encryptionMatchesTheRFCVectorsBothWays(_ vector: RFC8439.Encryption) throws {
        let cipher = try #require(ChaCha20(key: vector.key))
        let nonce = try #require(ChaCha20.Nonce(vector.nonce))
        #expect(cipher.encrypt(vector.plaintext, nonce: nonce, counter: vector.counter) == vector.ciphertext)
        #expect(cipher.encrypt(vector.ciphertext, nonce: nonce, counter: vector.counter) == vector.plaintext)
    }

    @Test(arguments: RFC8439.keyGenerations)
    func blockZeroGivesThePoly1305OneTimeKeyOfTheRFCVectors(_ vector: RFC8439.KeyGeneration) throws {
        let cipher = try #require(ChaCha20(key: vector.key))
        let nonce = try #require(ChaCha20.Nonce(vector.nonce))
        #expect(Array(cipher.block(counter: 0, nonce: nonce).prefix(32)) == vector.oneTimeKey)
    }

    @Test func encryptingInAnyLengthMatchesTheConcatenatedKeystream() throws {
        var generator = TestGenerator(seed: 31)
        let key = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let cipher = try #require(ChaCha20(key: key))
        let nonce = ChaCha20.Nonce(prefix: 7, counter: 0x0102_0304_0506_0708)
        let keystream = (0..<5).flatMap { cipher.block(counter: 3 + UInt32($0), nonce: nonce) }
        // Every length around the 64-byte blocks, so whole and partial blocks both run.
        for count in [0, 1, 7, 8, 63, 64, 65, 127, 128, 129, 200, 320] {
            #expect(cipher.encrypt([UInt8](repeating: 0, count: count), nonce: nonce, counter: 3) == Array(keystream.prefix(count)), "\(count) bytes")
        }
    }

    @Test func refusesKeysAndNoncesOfAnyOtherSize() {
        #expect(ChaCha20(key: [UInt8](repeating: 0, count: 31)) == nil)
        #expect(ChaCha20(key: [UInt8](repeating: 0, count: 33)) == nil)
        #expect(ChaCha20.Nonce([UInt8](repeating: 0, count: 8)) == nil)
        #expect(ChaCha20.Nonce([UInt8](repeating: 0, count: 16)) == nil)
    }

    @Test func aCounterNonceIsAPrefixThenTheCounterLittleEndian() throws {
        let nonce = ChaCha20.Nonce(prefix: 0x0000_0007, counter: 0x4746_4544_4342_4140)
        // RFC 8439 §2.8.2's nonce: the fixed part 07 00 00 00, then the IV 40 … 47.
        #expect(nonce == ChaCha20.Nonce(bytes("070000004041424344454647")))
        #expect(nonce.bytes == bytes("070000004041424344454647"))
        #expect(ChaCha20.Nonce(counter: 1) != ChaCha20.Nonce(counter: 1 << 32))
    }
}
