import Testing
@testable import SpokesConsensus

@Suite struct RaftLogFormatTests {
    static func entries(_ range: ClosedRange<Int>, term: Int) -> [RaftEntry] {
        range.map { RaftEntry(index: $0, term: term, command: $0 % 3 == 0 ? nil : "command \($0) ✓") }
    }

    /// Two flushes: the second (the last record) is what a crash could tear.
    static let first = [RaftWrite(hardState: RaftHardState(term: 2, votedFor: "b"), entries: entries(1...3, term: 2))]
    static let second = [RaftWrite(truncateAfter: 2, entries: entries(3...5, term: 3)), RaftWrite(hardState: RaftHardState(term: 3, votedFor: nil))]

    static func state(after batches: [[RaftWrite]]) -> RaftDurableState {
        var state = RaftDurableState.empty
        for batch in batches { for write in batch { state.apply(write) } }
        return state
    }

    func recover(_ log: [UInt8], snapshot: [UInt8]? = nil) throws -> RaftLogFormat.Recovery {
        try RaftLogFormat.recover(log: log, snapshot: snapshot, logName: "g/log", snapshotName: "g/snapshot")
    }

    @Test func recordsReplayToTheStateTheWritesDescribe() throws {
        let bytes = RaftLogFormat.record(for: Self.first)! + RaftLogFormat.record(for: Self.second)!
        let recovery = try recover(bytes)
        #expect(recovery.state == Self.state(after: [Self.first, Self.second]))
        #expect(recovery.state.entries.map(\.term) == [2, 2, 3, 3, 3])
        #expect(recovery.validLogLength == bytes.count)
        #expect(recovery.droppedTail == nil)
    }

    @Test func aWriteWithNothingToAppendMakesNoRecord() {
        #expect(RaftLogFormat.record(for: []) == nil)
        #expect(RaftLogFormat.record(for: [RaftWrite()]) == nil)
    }

    /// Cut the file at every byte inside the last record: recovery drops exactly that
    /// record, and never reads any of it.
    @Test func aTornLastRecordIsDroppedAtEveryByteOffset() throws {
        let good = RaftLogFormat.record(for: Self.first)!
        let last = RaftLogFormat.record(for: Self.second)!
        let expected = Self.state(after: [Self.first])
        for cut in 0..<last.count {
            let recovery = try recover(good + last.prefix(cut))
            #expect(recovery.state == expected, "cut after \(cut) bytes")
            #expect(recovery.validLogLength == good.count)
            #expect((recovery.droppedTail != nil) == (cut > 0))
        }
    }

    @Test func aLastRecordWithAFlippedBitOrAZeroFilledTailIsDropped() throws {
        let good = RaftLogFormat.record(for: Self.first)!
        let last = RaftLogFormat.record(for: Self.second)!
        for position in stride(from: RaftRecordFraming.headerSize - 4, to: last.count, by: 7) {
            var damaged = last
            damaged[position] ^= 0x10
            let recovery = try recover(good + damaged)
            #expect(recovery.state == Self.state(after: [Self.first]), "bit flipped at \(position)")
        }
        let zeroed = try recover(good + last.prefix(10) + [UInt8](repeating: 0, count: 4096))
        #expect(zeroed.state == Self.state(after: [Self.first]))
        #expect(try recover(good + [UInt8](repeating: 0, count: 4096)).droppedTail?.contains("zero bytes") == true)
    }

    @Test func damageBeforeTheLastRecordIsAnErrorNamingFileAndOffset() throws {
        var first = RaftLogFormat.record(for: Self.first)!
        first[20] ^= 0x01
        let bytes = first + RaftLogFormat.record(for: Self.second)!
        #expect(throws: RaftStorageError.corruptRecord(file: "g/log", offset: 0, reason: "checksum mismatch in a record followed by \(bytes.count - first.count) more bytes")) {
            try recover(bytes)
        }
        let middle = RaftLogFormat.record(for: Self.first)! + RaftLogFormat.record(for: Self.first)! + RaftLogFormat.record(for: Self.second)!
        var damaged = middle
        damaged[RaftLogFormat.record(for: Self.first)!.count + 12] ^= 0xFF
        do {
            _ = try recover(damaged)
            Issue.record("a damaged middle record was accepted")
        } catch {
            #expect("\(error)".hasPrefix("g/log: corrupt record at byte \(RaftLogFormat.record(for: Self.first)!.count):"), "\(error)")
        }
    }

    @Test func recordsThatDecodeToNonsenseAreErrors() throws {
        let gap = RaftLogFormat.record(for: [RaftWrite(entries: [RaftEntry(index: 1, term: 1, command: nil), RaftEntry(index: 3, term: 1, command: nil)])])!
        #expect(throws: RaftStorageError.corruptRecord(file: "g/log", offset: 0, reason: "entry 3 where 2 was expected")) { try recover(gap) }
        let unknown = RaftRecordFraming.frame([1, 99])
        #expect(throws: RaftStorageError.corruptRecord(file: "g/log", offset: 0, reason: "unknown operation 99")) { try recover(unknown + unknown) }
        let short = RaftRecordFraming.frame([1, 2, 0, 0])
        #expect(throws: RaftStorageError.corruptRecord(file: "g/log", offset: 0, reason: "index runs past the end")) { try recover(short) }
    }

    @Test func aCompactedLogStartsAfterItsSnapshot() throws {
        var state = Self.state(after: [Self.first, Self.second])
        state.apply(RaftWrite(snapshot: RaftSnapshot(index: 3, term: 3, data: "{\"bikes\":7}")))
        #expect(state.entries.map(\.index) == [4, 5])
        let recovery = try recover(RaftLogFormat.compactedLog(for: state), snapshot: RaftLogFormat.snapshotFile(state.snapshot!))
        #expect(recovery.state == state)
    }

    /// A crash after the snapshot's rename but before the log's rewrite leaves a new
    /// snapshot beside the old log: recovery drops the entries it covers, and all of them
    /// when the log does not hold the snapshot's last entry.
    @Test func aNewSnapshotBesideAnOldLogIsReconciled() throws {
        let log = RaftLogFormat.record(for: Self.first)! + RaftLogFormat.record(for: Self.second)!
        let matching = try recover(log, snapshot: RaftLogFormat.snapshotFile(RaftSnapshot(index: 4, term: 3, data: "s")))
        #expect(matching.state.entries.map(\.index) == [5])
        #expect(matching.state.hardState == RaftHardState(term: 3, votedFor: nil))
        let foreign = try recover(log, snapshot: RaftLogFormat.snapshotFile(RaftSnapshot(index: 4, term: 4, data: "s")))
        #expect(foreign.state.entries.isEmpty, "a snapshot of another history replaces the whole log")
        let beyond = try recover(log, snapshot: RaftLogFormat.snapshotFile(RaftSnapshot(index: 9, term: 3, data: "s")))
        #expect(beyond.state.entries.isEmpty)
        #expect(beyond.state.lastPosition == RaftLogPosition(index: 9, term: 3))
    }

    @Test func aLogThatStartsAfterASnapshotItDoesNotHaveIsInconsistent() throws {
        var state = Self.state(after: [Self.first])
        state.apply(RaftWrite(snapshot: RaftSnapshot(index: 2, term: 2, data: "")))
        let log = RaftLogFormat.compactedLog(for: state)
        #expect(throws: RaftStorageError.inconsistent(file: "g/log", reason: "the log starts after index 2 but there is no snapshot")) { try recover(log) }
        #expect(throws: RaftStorageError.inconsistent(file: "g/log", reason: "the log starts after index 2 but the snapshot covers only 1")) {
            try recover(log, snapshot: RaftLogFormat.snapshotFile(RaftSnapshot(index: 1, term: 2, data: "")))
        }
    }

    @Test func aDamagedSnapshotIsAnError() throws {
        var snapshot = RaftLogFormat.snapshotFile(RaftSnapshot(index: 4, term: 3, data: "state"))
        snapshot[snapshot.count - 1] ^= 1
        #expect(throws: RaftStorageError.self) { try recover([], snapshot: snapshot) }
        #expect(throws: RaftStorageError.self) { try recover([], snapshot: Array(snapshot.prefix(5))) }
    }
}
