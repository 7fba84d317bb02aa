/// The contents of a group's files, as pure functions over bytes: `RaftStorage` does the
/// file I/O around them, and the simulator's disk uses them as they are, so a simulated
/// crash (torn tail included) recovers through the same code as a real one.
///
/// A log record's payload is a format byte (1) followed by operations, each a kind byte
/// then little-endian fields: `1` hard state (term, has-vote byte, vote), `2` entry
/// (index, term, a byte: 0 no-op, 1 command, 2 configuration; then the command, or the
/// replica count and names), `3` truncate (keep entries up to an index),
/// `4` base (a compacted log starts after this index and term; first in its file).
/// Strings are a UInt32 byte count and UTF-8. The snapshot file is one framed record:
/// format byte, index, term, then (format 2, a snapshot taken after a configuration
/// change) the replica count and names, then the snapshot's data as UTF-8 to the end.
public enum RaftLogFormat {
    static let formatVersion: UInt8 = 1
    /// A snapshot file that also holds the group's replicas.
    static let snapshotWithReplicas: UInt8 = 2

    private enum Operation: UInt8 {
        case hardState = 1
        case entry = 2
        case truncate = 3
        case base = 4
    }

    // MARK: - Writing

    /// The framed record one flush appends for `writes` (their snapshots aside: a write
    /// with a snapshot rewrites the whole log, see `compactedLog`). Nil when there is
    /// nothing to append.
    public static func record(for writes: [RaftWrite]) -> [UInt8]? {
        var writer = BinaryWriter()
        writer.write(formatVersion)
        var any = false
        for write in writes {
            if let hardState = write.hardState {
                encode(hardState, into: &writer)
                any = true
            }
            if let index = write.truncateAfter {
                writer.write(Operation.truncate.rawValue)
                writer.write(index)
                any = true
            }
            for entry in write.entries {
                encode(entry, into: &writer)
                any = true
            }
        }
        return any ? RaftRecordFraming.frame(writer.bytes) : nil
    }

    /// A whole log file holding `state`'s hard state and entries after its snapshot.
    public static func compactedLog(for state: RaftDurableState) -> [UInt8] {
        var writer = BinaryWriter()
        writer.write(formatVersion)
        let base = state.snapshot?.position ?? RaftLogPosition(index: 0, term: 0)
        writer.write(Operation.base.rawValue)
        writer.write(base.index)
        writer.write(base.term)
        encode(state.hardState, into: &writer)
        for entry in state.entries { encode(entry, into: &writer) }
        return RaftRecordFraming.frame(writer.bytes)
    }

    /// The snapshot file's bytes.
    public static func snapshotFile(_ snapshot: RaftSnapshot) -> [UInt8] {
        var writer = BinaryWriter()
        writer.write(snapshot.replicas == nil ? formatVersion : snapshotWithReplicas)
        writer.write(snapshot.index)
        writer.write(snapshot.term)
        if let replicas = snapshot.replicas { write(replicas, into: &writer) }
        writer.bytes.append(contentsOf: snapshot.data.utf8)
        return RaftRecordFraming.frame(writer.bytes)
    }

    private static func encode(_ hardState: RaftHardState, into writer: inout BinaryWriter) {
        writer.write(Operation.hardState.rawValue)
        writer.write(hardState.term)
        writer.write(UInt8(hardState.votedFor == nil ? 0 : 1))
        if let vote = hardState.votedFor { writer.write(vote) }
    }

    private static func encode(_ entry: RaftEntry, into writer: inout BinaryWriter) {
        writer.write(Operation.entry.rawValue)
        writer.write(entry.index)
        writer.write(entry.term)
        if let replicas = entry.replicas {
            writer.write(UInt8(2))
            write(replicas, into: &writer)
        } else {
            writer.write(UInt8(entry.command == nil ? 0 : 1))
            if let command = entry.command { writer.write(command) }
        }
    }

    private static func write(_ replicas: [String], into writer: inout BinaryWriter) {
        writer.write(replicas.count)
        for name in replicas { writer.write(name) }
    }

    private static func readReplicas(_ reader: inout BinaryReader) throws(BinaryReader.Failure) -> [String] {
        let count = try reader.readCount("replica count")
        guard count <= RaftMessage.maximumReplicas else { throw BinaryReader.Failure(reason: "\(count) replicas") }
        var replicas: [String] = []
        for _ in 0..<count { replicas.append(try reader.readString("replica")) }
        guard RaftMessage.isConfiguration(replicas) else { throw BinaryReader.Failure(reason: "replicas \(replicas) are not a configuration") }
        return replicas
    }

    // MARK: - Recovering

    /// What recovery found.
    public struct Recovery: Sendable {
        public var state: RaftDurableState
        /// The log file's length up to its last good record (truncate the file to it).
        public var validLogLength: Int
        /// What was dropped from the log's tail, if anything (a torn write).
        public var droppedTail: String?
    }

    /// Rebuilds the durable state from the log file's bytes and the snapshot file's (nil
    /// when there is none). A torn last log record is dropped; any other damage throws,
    /// naming `logName` or `snapshotName` and the offset.
    public static func recover(log: [UInt8], snapshot snapshotBytes: [UInt8]?, logName: String, snapshotName: String) throws(RaftStorageError) -> Recovery {
        let snapshot = try snapshotBytes.map { bytes throws(RaftStorageError) in try decodeSnapshot(bytes, file: snapshotName) }
        let scan = try RaftRecordFraming.scan(log, file: logName)
        var base = RaftLogPosition(index: 0, term: 0)
        var hardState = RaftHardState(term: 0, votedFor: nil)
        var entries: [RaftEntry] = []
        for (recordNumber, record) in scan.records.enumerated() {
            var reader = BinaryReader(record.payload)
            func corrupt(_ reason: String) -> RaftStorageError { .corruptRecord(file: logName, offset: record.offset, reason: reason) }
            do {
                guard try reader.readByte("format") == formatVersion else { throw corrupt("unknown format") }
                var first = true
                while !reader.isAtEnd {
                    defer { first = false }
                    let kind = try reader.readByte("operation")
                    switch Operation(rawValue: kind) {
                    case .hardState:
                        let term = try reader.readCount("term")
                        let vote = try reader.readByte("vote flag") == 0 ? nil : try reader.readString("vote")
                        hardState = RaftHardState(term: term, votedFor: vote)
                    case .entry:
                        let index = try reader.readCount("index")
                        let term = try reader.readCount("term")
                        var command: String?
                        var replicas: [String]?
                        switch try reader.readByte("command flag") {
                        case 0: break
                        case 1: command = try reader.readString("command")
                        case 2: replicas = try readReplicas(&reader)
                        case let flag: throw corrupt("unknown entry flag \(flag)")
                        }
                        let expected = base.index + entries.count + 1
                        guard index == expected else { throw corrupt("entry \(index) where \(expected) was expected") }
                        entries.append(RaftEntry(index: index, term: term, command: command, replicas: replicas))
                    case .truncate:
                        let after = try reader.readCount("truncation index")
                        guard after >= base.index else { throw corrupt("truncation after \(after), below the log's start \(base.index)") }
                        if after < base.index + entries.count { entries.removeLast(base.index + entries.count - after) }
                    case .base:
                        guard recordNumber == 0, first else { throw corrupt("a log base that is not the file's first operation") }
                        base = RaftLogPosition(index: try reader.readCount("base index"), term: try reader.readCount("base term"))
                    case nil:
                        throw corrupt("unknown operation \(kind)")
                    }
                }
            } catch let failure as BinaryReader.Failure {
                throw corrupt(failure.reason)
            } catch let error as RaftStorageError {
                throw error
            } catch {
                throw corrupt("\(error)")
            }
        }
        var state = RaftDurableState(hardState: hardState, snapshot: nil, entries: entries)
        if let snapshot {
            guard snapshot.index >= base.index else {
                throw .inconsistent(file: logName, reason: "the log starts after index \(base.index) but the snapshot covers only \(snapshot.index)")
            }
            let holdsSnapshotEntry = snapshot.position == base
                || (snapshot.index > base.index && snapshot.index <= base.index + entries.count && entries[snapshot.index - base.index - 1].term == snapshot.term)
            state.snapshot = snapshot
            state.entries = holdsSnapshotEntry ? Array(entries.dropFirst(snapshot.index - base.index)) : []
        } else if base.index != 0 {
            throw .inconsistent(file: logName, reason: "the log starts after index \(base.index) but there is no snapshot")
        }
        return Recovery(state: state, validLogLength: scan.validLength, droppedTail: scan.droppedTail)
    }

    static func decodeSnapshot(_ bytes: [UInt8], file: String) throws(RaftStorageError) -> RaftSnapshot {
        let scan = try RaftRecordFraming.scan(bytes, file: file)
        guard scan.records.count == 1, scan.droppedTail == nil, let record = scan.records.first else {
            throw .corruptSnapshot(file: file, reason: scan.droppedTail ?? "expected one record, found \(scan.records.count)")
        }
        var reader = BinaryReader(record.payload)
        do throws(BinaryReader.Failure) {
            let format = try reader.readByte("format")
            guard format == formatVersion || format == snapshotWithReplicas else { throw BinaryReader.Failure(reason: "unknown format") }
            let index = try reader.readCount("index")
            let term = try reader.readCount("term")
            guard index >= 1, term >= 1 else { throw BinaryReader.Failure(reason: "snapshot position \(index)@\(term)") }
            let replicas = format == snapshotWithReplicas ? try readReplicas(&reader) : nil
            return RaftSnapshot(index: index, term: term, data: try reader.readRemainingString("data"), replicas: replicas)
        } catch {
            throw .corruptSnapshot(file: file, reason: error.reason)
        }
    }
}

extension RaftDurableState {
    /// Applies one write, as storage does: hard state, snapshot (compacting the
    /// entries), truncation, new entries.
    public mutating func apply(_ write: RaftWrite) {
        if let hardState = write.hardState { self.hardState = hardState }
        if let offered = write.snapshot, offered.index > (snapshot?.index ?? 0) {
            let base = snapshot?.index ?? 0
            let holdsEntry = offered.index <= base + entries.count && offered.index > base && entries[offered.index - base - 1].term == offered.term
            entries = holdsEntry ? Array(entries.dropFirst(offered.index - base)) : []
            snapshot = offered
        }
        if let after = write.truncateAfter {
            let base = snapshot?.index ?? 0
            if after >= base, after < base + entries.count { entries.removeLast(base + entries.count - after) }
        }
        entries.append(contentsOf: write.entries)
    }
}
