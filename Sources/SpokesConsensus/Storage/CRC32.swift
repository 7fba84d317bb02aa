/// CRC-32 as in IEEE 802.3, zlib and PNG (reflected polynomial 0xEDB88320, initial value
/// and final XOR 0xFFFFFFFF), table-driven. "123456789" gives 0xCBF43926.
///
/// It guards log records against torn writes and bit rot; it is not a defence against
/// tampering (whoever can write the data directory can write a matching checksum).
public enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { byte in
        var value = UInt32(byte)
        for _ in 0..<8 {
            value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1
        }
        return value
    }

    /// The checksum of `bytes`.
    public static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        update(0, with: bytes)
    }

    public static func checksum(_ bytes: [UInt8]) -> UInt32 {
        update(0, with: bytes[...])
    }

    /// Continues `crc` (a previous result, or 0 to start) over `bytes`.
    public static func update(_ crc: UInt32, with bytes: ArraySlice<UInt8>) -> UInt32 {
        table.withUnsafeBufferPointer { table in
            bytes.withUnsafeBufferPointer { bytes in
                var value = ~crc
                for byte in bytes {
                    value = table[Int((value ^ UInt32(byte)) & 0xFF)] ^ (value >> 8)
                }
                return ~value
            }
        }
    }
}
