/// The framing of a log file: records of `[UInt32 length][UInt32 CRC-32 of payload]
/// [payload]`, little-endian, one record per flush (group commit), so a record is either
/// wholly durable or the torn tail of the one flush a crash interrupted.
///
/// Reading (`scan`) tells the two kinds of damage apart:
/// - the **last** record is short (fewer than 8 header bytes, or a length reaching past
///   the end of the file), fails its checksum, or the file ends in zero bytes (space a
///   file system allocated but never wrote): a torn write. It is dropped, never read as
///   data, and the caller truncates the file back to the last good record. Nothing in it
///   was acknowledged: the flush that wrote it never returned.
/// - a record that fails its checksum (or has a zero length) and is followed by
///   anything but zero bytes: that is corruption of acknowledged data, an error naming
///   the file and byte offset. (So a bit flip in the last record's length field that
///   makes it look shorter is reported, not dropped: when in doubt, refuse to start
///   rather than silently lose acknowledged entries.)
public enum RaftRecordFraming {
    public static let headerSize = 8

    /// `payload` as one framed record.
    public static func frame(_ payload: [UInt8]) -> [UInt8] {
        var writer = BinaryWriter()
        writer.bytes.reserveCapacity(payload.count + headerSize)
        writer.write(UInt32(payload.count))
        writer.write(CRC32.checksum(payload))
        writer.bytes.append(contentsOf: payload)
        return writer.bytes
    }

    /// What `scan` found.
    public struct Scan: Sendable {
        /// Each good record's byte offset and payload.
        public var records: [(offset: Int, payload: ArraySlice<UInt8>)]
        /// Bytes up to the end of the last good record.
        public var validLength: Int
        /// Why the tail after `validLength` was dropped, if it was.
        public var droppedTail: String?
    }

    /// Splits `bytes` (the content of `file`) into records.
    public static func scan(_ bytes: [UInt8], file: String) throws(RaftStorageError) -> Scan {
        var scan = Scan(records: [], validLength: 0, droppedTail: nil)
        var offset = 0
        while offset < bytes.count {
            let remaining = bytes.count - offset
            if bytes[offset...].allSatisfy({ $0 == 0 }) {
                scan.droppedTail = "\(remaining) zero bytes at byte \(offset)"
                break
            }
            guard remaining >= headerSize else {
                scan.droppedTail = "a \(remaining)-byte partial header at byte \(offset)"
                break
            }
            var header = BinaryReader(bytes[offset..<(offset + headerSize)])
            let length = Int((try? header.readUInt32("length")) ?? 0)
            let checksum = (try? header.readUInt32("checksum")) ?? 0
            guard length > 0 else {
                if remaining == headerSize {
                    scan.droppedTail = "a header without a record at byte \(offset)"
                    break
                }
                throw .corruptRecord(file: file, offset: offset, reason: "zero length")
            }
            guard length <= remaining - headerSize else {
                scan.droppedTail = "a record at byte \(offset) declaring \(length) bytes with only \(remaining - headerSize) present"
                break
            }
            let end = offset + headerSize + length
            let payload = bytes[(offset + headerSize)..<end]
            guard CRC32.checksum(payload) == checksum else {
                if bytes[end...].allSatisfy({ $0 == 0 }) {
                    scan.droppedTail = "the last record, at byte \(offset), fails its checksum"
                    break
                }
                throw .corruptRecord(file: file, offset: offset, reason: "checksum mismatch in a record followed by \(bytes.count - end) more bytes")
            }
            scan.records.append((offset, payload))
            offset = end
            scan.validLength = end
        }
        return scan
    }
}
