import Testing
@testable import SpokesConsensus

@Suite struct CRC32Tests {
    /// Published check values of CRC-32/ISO-HDLC (the IEEE 802.3 CRC used by zlib).
    @Test(arguments: [
        ("123456789", UInt32(0xCBF4_3926)),
        ("", UInt32(0)),
        ("a", UInt32(0xE8B7_BE43)),
        ("abc", UInt32(0x3524_41C2)),
        ("The quick brown fox jumps over the lazy dog", UInt32(0x414F_A339)),
    ])
    func checksumsMatchPublishedValues(_ text: String, _ expected: UInt32) {
        #expect(CRC32.checksum(Array(text.utf8)) == expected)
    }

    @Test func checksumsCanBeContinued() {
        let whole = CRC32.checksum(Array("123456789".utf8))
        #expect(CRC32.update(CRC32.checksum(Array("1234".utf8)), with: Array("56789".utf8)[...]) == whole)
    }
}
