import Testing
import SpokesCrypto

/// HKDF-SHA256 against RFC 5869's SHA-256 test cases (A.1 to A.3), each step on its own,
/// and its limits.
@Suite struct HKDFTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String, ikm: [UInt8], salt: [UInt8], info: [UInt8], prk: [UInt8], okm: [UInt8]
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "RFC 5869 A.1", ikm: [UInt8](repeating: 0x0b, count: 22), salt: Array(0x00...0x0c), info: Array(0xf0...0xf9),
             prk: bytes("077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5"),
             okm: bytes("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf", "34007208d5b887185865")),
        Case(name: "RFC 5869 A.2", ikm: Array(0x00...0x4f), salt: Array(0x60...0xaf), info: Array(0xb0...0xff),
             prk: bytes("06a6b88c5853361a06104c9ceb35b45cef760014904671014a193f40c15fc244"),
             okm: bytes("b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c",
                        "59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71",
                        "cc30c58179ec3e87c14c01d5c1f3434f1d87")),
        Case(name: "RFC 5869 A.3", ikm: [UInt8](repeating: 0x0b, count: 22), salt: [], info: [],
             prk: bytes("19ef24a32c717b167f33a91d6f648bdf96596776afdb6377ac434c1c293ccb04"),
             okm: bytes("8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d", "9d201395faa4b61a96c8")),
    ]

    @Test(arguments: cases)
    func extractAndExpandMatchTheRFCTestCases(_ test: Case) {
        let prk = HKDF.extract(salt: test.salt, inputKeyMaterial: test.ikm)
        #expect(prk == test.prk)
        #expect(HKDF.expand(pseudorandomKey: prk, info: test.info, outputCount: test.okm.count) == test.okm)
        #expect(HKDF.deriveKey(inputKeyMaterial: test.ikm, salt: test.salt, info: test.info, outputCount: test.okm.count) == test.okm)
    }

    @Test func aShorterOutputIsAPrefixOfALongerOne() throws {
        let prk = HKDF.extract(salt: [1, 2, 3], inputKeyMaterial: [4, 5, 6])
        let long = try #require(HKDF.expand(pseudorandomKey: prk, info: [7], outputCount: 100))
        for count in [0, 1, 31, 32, 33, 64, 99] {
            #expect(HKDF.expand(pseudorandomKey: prk, info: [7], outputCount: count) == Array(long.prefix(count)))
        }
    }

    @Test func refusesMoreThan255BlocksANegativeCountOrAShortKey() {
        let prk = [UInt8](repeating: 9, count: 32)
        #expect(HKDF.expand(pseudorandomKey: prk, info: [], outputCount: 255 * 32)?.count == 255 * 32)
        #expect(HKDF.expand(pseudorandomKey: prk, info: [], outputCount: 255 * 32 + 1) == nil)
        #expect(HKDF.expand(pseudorandomKey: prk, info: [], outputCount: -1) == nil)
        #expect(HKDF.expand(pseudorandomKey: prk.dropLast(), info: [], outputCount: 32) == nil)
    }
}
