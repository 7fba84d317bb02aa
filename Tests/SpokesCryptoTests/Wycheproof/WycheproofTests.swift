import Foundation
import Testing
import SpokesCrypto

/// Project Wycheproof's vectors (https://github.com/C2SP/wycheproof, Apache 2.0; the files
/// and their LICENCE are in Vectors/), every one of them, valid and invalid: a valid vector
/// must come out exactly, an invalid one must be refused. The counts are asserted, so a
/// file that went missing or was cut short fails instead of passing with nothing run.
@Suite struct WycheproofTests {
    /// Tests in chacha20_poly1305_test.json (256 valid, 69 invalid).
    static let chaCha20Poly1305Count = 325
    /// Tests in hkdf_sha256_test.json (83 valid, 3 invalid).
    static let hkdfCount = 86

    struct File<Group: Decodable>: Decodable {
        let algorithm: String
        let numberOfTests: Int
        let testGroups: [Group]
    }

    struct AEADGroup: Decodable {
        let ivSize: Int
        let tests: [AEADTest]
    }

    struct AEADTest: Decodable {
        let tcId: Int, comment: String, key: String, iv: String, aad: String, msg: String, ct: String, tag: String, result: String
    }

    struct HKDFGroup: Decodable {
        let tests: [HKDFTest]
    }

    struct HKDFTest: Decodable {
        let tcId: Int, comment: String, ikm: String, salt: String, info: String, size: Int, okm: String, result: String
    }

    static func load<Group: Decodable>(_ name: String, as: Group.Type) throws -> File<Group> {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Vectors"))
        return try JSONDecoder().decode(File<Group>.self, from: Data(contentsOf: url))
    }

    @Test func chaCha20Poly1305PassesEveryVector() throws {
        let file = try Self.load("chacha20_poly1305_test", as: AEADGroup.self)
        #expect(file.algorithm == "CHACHA20-POLY1305")
        var ran = (valid: 0, invalid: 0)
        for group in file.testGroups {
            for test in group.tests {
                let key = [UInt8](hex: test.key), aad = [UInt8](hex: test.aad), message = [UInt8](hex: test.msg)
                let sealed = [UInt8](hex: test.ct) + [UInt8](hex: test.tag)
                let aead = try #require(ChaCha20Poly1305(key: key), "tcId \(test.tcId)")
                let nonce = ChaCha20.Nonce([UInt8](hex: test.iv))
                if test.result == "valid" {
                    let nonce = try #require(nonce, "tcId \(test.tcId): \(test.comment)")
                    #expect(aead.seal(message, nonce: nonce, authenticating: aad) == sealed, "tcId \(test.tcId): \(test.comment)")
                    #expect(aead.open(sealed, nonce: nonce, authenticating: aad) == message, "tcId \(test.tcId): \(test.comment)")
                    ran.valid += 1
                } else {
                    // Refused either way: a nonce of another size is no nonce, a bad tag opens nothing.
                    #expect(nonce.flatMap { aead.open(sealed, nonce: $0, authenticating: aad) } == nil, "tcId \(test.tcId): \(test.comment)")
                    ran.invalid += 1
                }
            }
        }
        #expect(file.numberOfTests == Self.chaCha20Poly1305Count)
        #expect(ran.valid + ran.invalid == Self.chaCha20Poly1305Count)
        #expect(ran.valid == 256 && ran.invalid == 69)
    }

    @Test func hkdfSHA256PassesEveryVector() throws {
        let file = try Self.load("hkdf_sha256_test", as: HKDFGroup.self)
        #expect(file.algorithm == "HKDF-SHA-256")
        var ran = (valid: 0, invalid: 0)
        for group in file.testGroups {
            for test in group.tests {
                let output = HKDF.deriveKey(inputKeyMaterial: [UInt8](hex: test.ikm), salt: [UInt8](hex: test.salt),
                                            info: [UInt8](hex: test.info), outputCount: test.size)
                if test.result == "valid" {
                    #expect(output == [UInt8](hex: test.okm), "tcId \(test.tcId): \(test.comment)")
                    ran.valid += 1
                } else {
                    #expect(output == nil, "tcId \(test.tcId): \(test.comment)")
                    ran.invalid += 1
                }
            }
        }
        #expect(file.numberOfTests == Self.hkdfCount)
        #expect(ran.valid + ran.invalid == Self.hkdfCount)
        #expect(ran.valid == 83 && ran.invalid == 3)
    }
}
