import Foundation
import Testing
@testable import SpokesConsensus

@Suite struct RaftStorageTests {
    /// A fresh directory under the system's temporary directory, removed by `remove`.
    struct Scratch {
        let path: String

        init() {
            path = FileManager.default.temporaryDirectory.appendingPathComponent("spokes-raft-\(UUID().uuidString)").path
        }

        func remove() { try? FileManager.default.removeItem(atPath: path) }
        func file(_ name: String) -> String { path + "/group/" + name }
        var group: String { path + "/group" }
    }

    static func entries(_ range: ClosedRange<Int>, term: Int) -> [RaftEntry] {
        range.map { RaftEntry(index: $0, term: term, command: "move \($0)") }
    }

    @Test func writesSurviveAReopenAndTheSyncReportsTheLastEntry() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let storage = try RaftStorage(directory: scratch.group)
        #expect(storage.recovered == .empty)
        try storage.write(RaftWrite(hardState: RaftHardState(term: 1, votedFor: "a"), entries: Self.entries(1...3, term: 1)))
        try storage.write(RaftWrite(truncateAfter: 2, entries: Self.entries(3...4, term: 2)))
        #expect(try storage.sync() == RaftLogPosition(index: 4, term: 2))
        try storage.write(RaftWrite(hardState: RaftHardState(term: 2, votedFor: nil)))
        try storage.sync()
        let expected = storage.state
        storage.close()
        let reopened = try RaftStorage(directory: scratch.group)
        #expect(reopened.recovered == expected)
        #expect(reopened.recovered.entries.map(\.term) == [1, 1, 2, 2])
        #expect(reopened.droppedTail == nil)
    }

    @Test func unsyncedWritesAreLostLikeInACrash() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let storage = try RaftStorage(directory: scratch.group)
        try storage.write(RaftWrite(entries: Self.entries(1...2, term: 1)))
        try storage.sync()
        try storage.write(RaftWrite(entries: Self.entries(3...3, term: 1)))
        storage.close()
        #expect(try RaftStorage(directory: scratch.group).recovered.entries.count == 2)
    }

    @Test func aTornLastRecordIsDroppedAndTheFileTruncatedBackToTheLastGoodOne() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let storage = try RaftStorage(directory: scratch.group)
        try storage.write(RaftWrite(entries: Self.entries(1...2, term: 1)))
        try storage.sync()
        let good = try Data(contentsOf: URL(fileURLWithPath: scratch.file("log")))
        try storage.write(RaftWrite(entries: Self.entries(3...9, term: 1)))
        try storage.sync()
        storage.close()
        let full = try Data(contentsOf: URL(fileURLWithPath: scratch.file("log")))
        for cut in [good.count + 1, good.count + 7, good.count + 8, full.count - 1] {
            try full.prefix(cut).write(to: URL(fileURLWithPath: scratch.file("log")))
            let reopened = try RaftStorage(directory: scratch.group)
            #expect(reopened.recovered.entries.map(\.index) == [1, 2], "cut at \(cut)")
            #expect(reopened.droppedTail != nil)
            #expect(try Data(contentsOf: URL(fileURLWithPath: scratch.file("log"))) == good, "the torn tail is cut off the file")
            try reopened.write(RaftWrite(entries: Self.entries(3...3, term: 1)))
            try reopened.sync()
            reopened.close()
            #expect(try RaftStorage(directory: scratch.group).recovered.entries.map(\.index) == [1, 2, 3], "appends after the repair read back")
            try good.write(to: URL(fileURLWithPath: scratch.file("log")))
        }
    }

    @Test func aCorruptRecordBeforeTheLastIsReportedWithFileAndOffset() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let storage = try RaftStorage(directory: scratch.group)
        try storage.write(RaftWrite(entries: Self.entries(1...2, term: 1)))
        try storage.sync()
        try storage.write(RaftWrite(entries: Self.entries(3...4, term: 1)))
        try storage.sync()
        storage.close()
        var bytes = try Data(contentsOf: URL(fileURLWithPath: scratch.file("log")))
        bytes[12] ^= 0x40
        try bytes.write(to: URL(fileURLWithPath: scratch.file("log")))
        do {
            _ = try RaftStorage(directory: scratch.group)
            Issue.record("corruption was not reported")
        } catch {
            #expect("\(error)".hasPrefix("\(scratch.file("log")): corrupt record at byte 0: checksum mismatch"), "\(error)")
        }
    }

    @Test func aSnapshotCompactsTheLogAndBothReadBack() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let storage = try RaftStorage(directory: scratch.group)
        try storage.write(RaftWrite(hardState: RaftHardState(term: 1, votedFor: "a"), entries: Self.entries(1...100, term: 1)))
        try storage.sync()
        let before = try FileManager.default.attributesOfItem(atPath: scratch.file("log"))[.size] as! Int
        try storage.write(RaftWrite(entries: Self.entries(101...102, term: 1)))
        try storage.write(RaftWrite(snapshot: RaftSnapshot(index: 95, term: 1, data: "{\"through\":95}")))
        let after = try FileManager.default.attributesOfItem(atPath: scratch.file("log"))[.size] as! Int
        #expect(after < before / 5, "the log was rewritten without the covered entries: \(before) -> \(after) bytes")
        #expect(!FileManager.default.fileExists(atPath: scratch.file("log.tmp")))
        #expect(!FileManager.default.fileExists(atPath: scratch.file("snapshot.tmp")))
        try storage.write(RaftWrite(entries: Self.entries(103...103, term: 2)))
        #expect(try storage.sync() == RaftLogPosition(index: 103, term: 2))
        storage.close()
        let reopened = try RaftStorage(directory: scratch.group).recovered
        #expect(reopened.snapshot == RaftSnapshot(index: 95, term: 1, data: "{\"through\":95}"))
        #expect(reopened.entries.map(\.index) == Array(96...103), "the writes buffered before the snapshot were made durable with it")
        #expect(reopened.hardState == RaftHardState(term: 1, votedFor: "a"))
    }

    @Test func aCrashBetweenTheSnapshotsRenameAndTheCompactionRecovers() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let storage = try RaftStorage(directory: scratch.group)
        try storage.write(RaftWrite(entries: Self.entries(1...10, term: 1)))
        try storage.sync()
        storage.close()
        // The snapshot reached its name; the log is still the old one, and a half-written
        // log.tmp lies beside it.
        try Data(RaftLogFormat.snapshotFile(RaftSnapshot(index: 6, term: 1, data: "six"))).write(to: URL(fileURLWithPath: scratch.file("snapshot")))
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: scratch.file("log.tmp")))
        let reopened = try RaftStorage(directory: scratch.group)
        #expect(reopened.recovered.snapshot?.index == 6)
        #expect(reopened.recovered.entries.map(\.index) == [7, 8, 9, 10])
        #expect(!FileManager.default.fileExists(atPath: scratch.file("log.tmp")), "leftovers of an interrupted rewrite are removed")
    }

    @Test func aClosedStorageRefusesWrites() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let storage = try RaftStorage(directory: scratch.group)
        storage.close()
        #expect(throws: RaftStorageError.unusable(file: scratch.file("log"))) { try storage.write(RaftWrite(entries: Self.entries(1...1, term: 1))) }
    }

    @Test func anUnwritableDirectoryIsAnErrorNamingIt() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        try FileManager.default.createDirectory(atPath: scratch.path, withIntermediateDirectories: true)
        try Data().write(to: URL(fileURLWithPath: scratch.group))
        #expect(throws: RaftStorageError.self) { try RaftStorage(directory: scratch.group + "/inner") }
    }

    /// The recovered state starts a replica that resumes where it stopped.
    @Test func aReplicaRestartsFromWhatStorageRecovered() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let group = try RaftGroup(replicas: ["solo"])
        var storage = try RaftStorage(directory: scratch.group)
        var replica = try RaftReplica(id: "solo", group: group, state: storage.recovered, seed: 1)
        var applied: [String] = []
        func run(_ actions: [RaftAction]) throws {
            var pending = actions
            while !pending.isEmpty {
                var next: [RaftAction] = []
                for action in pending {
                    switch action {
                    case .persist(let write):
                        try storage.write(write)
                        let last = try storage.sync()
                        next += replica.persisted(through: last.index, term: last.term, now: 0)
                    case .apply(let entries): applied += entries.compactMap(\.command)
                    default: break
                    }
                }
                pending = next
            }
        }
        try run(replica.start(now: 0))
        try run(replica.propose(["x", "y"], now: 0).1)
        #expect(applied == ["x", "y"])
        storage.close()
        storage = try RaftStorage(directory: scratch.group)
        replica = try RaftReplica(id: "solo", group: group, state: storage.recovered, seed: 2)
        applied = []
        try run(replica.start(now: 0))
        #expect(replica.term == 2)
        #expect(applied == ["x", "y"], "a restarted single replica re-applies its log once its new term's no-op commits")
    }
}
