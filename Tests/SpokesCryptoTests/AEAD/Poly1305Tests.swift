import SpokesTestKit
import Testing
@testable import SpokesCrypto

/// Poly1305 against RFC 8439's vectors (§2.5.2 and A.3, whose #5 to #11 aim at the
/// reduction's edge cases) and its incremental interface.
@Suite struct Poly1305Tests {
    @Test(arguments: RFC8439.macs)
    func tagsMatchTheRFCVectors(_ vector: RFC8439.MAC) {
        #expect(Poly1305.authenticationCode(for: vector.message, key: vector.key) == vector.tag)
    }

    @Test func givesTheSameTagHoweverTheMessageIsSplit() throws {
        var generator = TestGenerator(seed: 1305)
        let key = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let message = (0..<300).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let whole = Poly1305.authenticationCode(for: message, key: key)
        for _ in 0..<50 {
            var poly = try #require(Poly1305(key: key))
            var index = 0
            while index < message.count {
                let end = min(message.count, index + Int.random(in: 0...40, using: &generator))
                poly.update(message[index..<end])
                index = end
            }
            #expect(poly.finalize() == whole)
        }
    }

    @Test func refusesAKeyOfAnyOtherSize() {
        #expect(Poly1305(key: [UInt8](repeating: 1, count: 16)) == nil)
        #expect(Poly1305.authenticationCode(for: [1, 2, 3], key: [UInt8](repeating: 1, count: 33)) == nil)
    }
}
