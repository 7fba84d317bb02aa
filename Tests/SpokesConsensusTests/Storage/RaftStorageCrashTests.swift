import SpokesConcurrency
import Testing
@testable import SpokesConsensus

/// ``RaftStorage`` on a ``SimulatedDisk`` that loses power: what a replica was told is
/// durable survives, what was not flushed is gone, and a torn append is dropped.
@Suite struct RaftStorageCrashTests {
    static func entries(_ range: ClosedRange<Int>, term: Int) -> [RaftEntry] {
        range.map { RaftEntry(index: $0, term: term, command: "move \($0)") }
    }

    @Test func whatSyncReportedSurvivesACrashAndTheRestIsLost() throws {
        let disk = SimulatedDisk()
        let storage = try RaftStorage(directory: "/node/raft/g", disk: disk)
        try storage.write(RaftWrite(hardState: RaftHardState(term: 1, votedFor: "a"), entries: Self.entries(1...2, term: 1)))
        #expect(try storage.sync() == RaftLogPosition(index: 2, term: 1))
        try storage.write(RaftWrite(entries: Self.entries(3...4, term: 1)))
        #expect(disk.unsyncedBytes == 0, "buffered writes are not on the disk before sync")
        disk.crash()
        let reopened = try RaftStorage(directory: "/node/raft/g", disk: disk)
        #expect(reopened.recovered.entries.map(\.index) == [1, 2])
        #expect(reopened.recovered.hardState == RaftHardState(term: 1, votedFor: "a"))
    }

    /// A storage opened again in the process after a failed flush reads what the kernel
    /// holds, flushed or not: opened to rewrite what it reads, all of it survives a crash
    /// before anything else is written; opened plainly, the unflushed part would not.
    @Test func aStorageOpenedToRewriteWhatItReadsMakesItDurable() throws {
        for rewriting in [true, false] {
            let disk = SimulatedDisk()
            let storage = try RaftStorage(directory: "/node/raft/g", disk: disk)
            try storage.write(RaftWrite(hardState: RaftHardState(term: 1, votedFor: "a"), entries: Self.entries(1...2, term: 1)))
            try storage.sync()
            // The next record reached the kernel; its flush failed.
            let record = try #require(RaftLogFormat.record(for: [RaftWrite(entries: Self.entries(3...4, term: 1))]))
            try disk.append(record, to: storage.logPath)
            storage.close()
            let reopened = try RaftStorage(directory: "/node/raft/g", disk: disk, rewritingWhatItReads: rewriting)
            #expect(reopened.recovered.entries.map(\.index) == [1, 2, 3, 4])
            disk.crash()
            let afterCrash = try RaftStorage(directory: "/node/raft/g", disk: disk).recovered
            #expect(afterCrash.entries.map(\.index) == (rewriting ? [1, 2, 3, 4] : [1, 2]), "rewriting: \(rewriting)")
            #expect(afterCrash.hardState == RaftHardState(term: 1, votedFor: "a"))
        }
    }

    @Test func aTornAppendIsDroppedAndTheLogTakesNewRecordsAfterIt() throws {
        let disk = SimulatedDisk()
        let storage = try RaftStorage(directory: "/node/raft/g", disk: disk)
        try storage.write(RaftWrite(entries: Self.entries(1...2, term: 1)))
        try storage.sync()
        // The power goes while the next record is being written: half of it reached the disk.
        let record = try #require(RaftLogFormat.record(for: [RaftWrite(entries: Self.entries(3...9, term: 1))]))
        try disk.append(record, to: storage.logPath)
        disk.crash(keepingOfUnsynced: { $0 / 2 })
        let reopened = try RaftStorage(directory: "/node/raft/g", disk: disk)
        #expect(reopened.recovered.entries.map(\.index) == [1, 2])
        #expect(reopened.droppedTail != nil)
        try reopened.write(RaftWrite(entries: Self.entries(3...3, term: 2)))
        try reopened.sync()
        disk.crash()
        #expect(try RaftStorage(directory: "/node/raft/g", disk: disk).recovered.entries.map(\.term) == [1, 1, 2])
    }

    @Test func aNewGroupsLogSurvivesACrashRightAfterItIsOpened() throws {
        let disk = SimulatedDisk()
        _ = try RaftStorage(directory: "/node/raft/g", disk: disk)
        disk.crash()
        #expect(try disk.contents(ofDirectory: "/node/raft/g") == [RaftStorage.logName])
    }
}
