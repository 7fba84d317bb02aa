import SpokesTestKit
import Testing
import SpokesCrypto

/// FIPS 180-4 examples (as published in the NIST "Example Algorithms" sheets) and
/// chunking properties.
@Suite struct SHA256Tests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        ("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"),
    ])
    func matchesThePublishedDigests(message: String, digest: String) {
        #expect(SHA256.hash(Array(message.utf8)).hex == digest)
    }

    @Test func hashesOneMillionAsInChunks() {
        var hasher = SHA256()
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 1000)
        for _ in 0..<1000 { hasher.update(chunk) }
        #expect(hasher.finalize().hex == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func givesTheSameDigestHoweverTheInputIsSplit() {
        var generator = TestGenerator(seed: 42)
        let message = (0..<300).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let whole = SHA256.hash(message)
        for _ in 0..<50 {
            var hasher = SHA256()
            var index = 0
            while index < message.count {
                let end = min(message.count, index + Int.random(in: 0...70, using: &generator))
                hasher.update(message[index..<end])
                index = end
            }
            #expect(hasher.finalize() == whole)
        }
    }

    @Test func padsEveryLengthAroundABlockBoundaryCorrectly() {
        // Lengths 55, 56 and 64 take the one-block and two-block padding paths.
        #expect(SHA256.hash([UInt8](repeating: 0x61, count: 55)).hex == "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318")
        #expect(SHA256.hash([UInt8](repeating: 0x61, count: 56)).hex == "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a")
        #expect(SHA256.hash([UInt8](repeating: 0x61, count: 64)).hex == "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb")
    }
}
