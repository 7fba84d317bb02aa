import Testing
@testable import SpokesConsensus

@Suite struct RaftSnapshotTests {
    @Test func compactionPersistsTheSnapshotAndForgetsTheEntriesItCovers() throws {
        var cluster = try RaftHarness(["a", "b", "c"])
        cluster.elect("a")
        cluster.propose("a", ["x", "y", "z"])
        cluster.deliverAll()
        let actions = try cluster.replicas["a"]!.compact(through: 3, snapshot: "state after y")
        #expect(actions == [.persist(RaftWrite(snapshot: RaftSnapshot(index: 3, term: 1, data: "state after y")))])
        cluster.handle("a", actions)
        #expect(cluster["a"].snapshotPosition == RaftLogPosition(index: 3, term: 1))
        #expect(cluster["a"].entry(at: 3) == nil)
        #expect(cluster["a"].entry(at: 4)?.command == "z")
        #expect(cluster.durable["a"]!.entries.map(\.index) == [4])
    }

    @Test func compactingBeyondWhatWasAppliedIsRefused() throws {
        var cluster = try RaftHarness(["a", "b", "c"])
        cluster.elect("a")
        cluster.propose("a", ["x"])
        #expect(throws: RaftReplica.CompactionError.notApplied(index: 2, applied: 1)) {
            _ = try cluster.replicas["a"]!.compact(through: 2, snapshot: "")
        }
    }

    @Test func aFollowerThatMissedCompactedEntriesGetsTheSnapshotThenTheRest() throws {
        var cluster = try RaftHarness(["a", "b", "c"])
        cluster.elect("a")
        cluster.propose("a", ["x", "y"])
        cluster.deliverAll(dropping: { $0.to == "c" })
        cluster.handle("a", try cluster.replicas["a"]!.compact(through: 3, snapshot: "x,y"))
        cluster.propose("a", ["z"])
        cluster.advance(to: cluster.now + 0.5, deliver: true)
        #expect(cluster.snapshotsApplied["c"] == [RaftSnapshot(index: 3, term: 1, data: "x,y")])
        #expect(cluster.commands(appliedBy: "c") == ["z"], "entries after the snapshot follow it")
        #expect(cluster["c"].snapshotPosition == RaftLogPosition(index: 3, term: 1))
        #expect(cluster.durable["c"]!.snapshot?.data == "x,y")
        #expect(cluster["a"].commitIndex == 4)
    }

    /// Review (issue 29 §1.5): a snapshot larger than a frame was sent whole, the receiver
    /// closed the connection, and every resend did it again. It goes in chunks now.
    @Test func aLargeSnapshotTravelsInChunksAndIsInstalledWhole() throws {
        let configuration = RaftConfiguration(maxSnapshotChunkBytes: 64)
        var cluster = try RaftHarness(["a", "b", "c"], configuration: configuration)
        cluster.elect("a")
        cluster.propose("a", ["x", "y"])
        cluster.deliverAll(dropping: { $0.to == "c" })
        // 1,000 bytes with two-byte and four-byte scalars, so cuts must fall between them.
        let data = String(repeating: "ab-é-🚲", count: 100)
        cluster.handle("a", try cluster.replicas["a"]!.compact(through: 3, snapshot: data))
        cluster.advance(to: cluster.now + 0.5, deliver: true)
        let chunks = cluster.delivered.compactMap { envelope -> RaftInstallSnapshot? in
            if case .installSnapshot(let install) = envelope.message { install } else { nil }
        }
        #expect(chunks.count > 10, "\(chunks.count) messages")
        #expect(chunks.allSatisfy { $0.snapshot.data.utf8.count <= 64 })
        #expect(cluster.snapshotsApplied["c"] == [RaftSnapshot(index: 3, term: 1, data: data)])
        #expect(cluster["a"].commitIndex >= 3)
    }

    @Test func aSnapshotMissingAChunkIsNotInstalledUntilItComesWhole() throws {
        let configuration = RaftConfiguration(maxSnapshotChunkBytes: 16)
        var cluster = try RaftHarness(["a", "b", "c"], configuration: configuration)
        cluster.elect("a")
        cluster.propose("a", ["x"])
        cluster.deliverAll(dropping: { $0.to == "c" })
        let data = String(repeating: "0123456789", count: 10)
        cluster.handle("a", try cluster.replicas["a"]!.compact(through: 2, snapshot: data))
        cluster.propose("a", ["z"])
        // The heartbeat answer sends the snapshot; its third chunk is lost.
        var dropped = false
        cluster.advance(to: cluster.now + 0.15)
        cluster.deliverAll(dropping: { envelope in
            guard !dropped, case .installSnapshot(let install) = envelope.message, install.offset == 32 else { return false }
            dropped = true
            return true
        })
        #expect(dropped)
        #expect(cluster.snapshotsApplied["c"] == nil, "a snapshot with a gap is not installed")
        // After an election timeout without an answer the leader sends it all again.
        cluster.advance(to: cluster.now + 2, deliver: true)
        #expect(cluster.snapshotsApplied["c"] == [RaftSnapshot(index: 2, term: 1, data: data)])
        #expect(cluster.commands(appliedBy: "c") == ["z"])
    }

    @Test func chunksAreWellFormedAndAnOversizedOneIsNot() {
        let snapshot = RaftSnapshot(index: 3, term: 1, data: String(repeating: "x", count: 100))
        let chunks = RaftInstallSnapshot.chunks(of: snapshot, term: 2, chunkBytes: 30)
        #expect(chunks.map(\.offset) == [0, 30, 60, 90])
        #expect(chunks.allSatisfy { RaftMessage.installSnapshot($0).isWellFormed })
        var lying = chunks[3]
        lying.total = 95
        #expect(!RaftMessage.installSnapshot(lying).isWellFormed, "a chunk past its announced total")
        #expect(RaftInstallSnapshot.chunks(of: snapshot, term: 2, chunkBytes: 500) == [RaftInstallSnapshot(term: 2, snapshot: snapshot)], "one message when it fits")
    }

    @Test func aRestartFromASnapshotAppliesItFirstThenTheCommittedEntries() throws {
        var cluster = try RaftHarness(["a", "b", "c"])
        cluster.elect("a")
        cluster.propose("a", ["x", "y"])
        cluster.deliverAll()
        cluster.advance(to: cluster.now + 0.2, deliver: true)
        cluster.handle("b", try cluster.replicas["b"]!.compact(through: 2, snapshot: "x"))
        try cluster.restart("b")
        #expect(cluster.snapshotsApplied["b"]?.last == RaftSnapshot(index: 2, term: 1, data: "x"))
        #expect(cluster["b"].appliedIndex == 2)
        cluster.advance(to: cluster.now + 0.3, deliver: true)
        #expect(cluster.commands(appliedBy: "b") == ["y"], "after a restart, only what follows the snapshot is applied")
    }

    @Test func aSnapshotOlderThanTheFollowersCommitIndexIsAcknowledgedAndIgnored() throws {
        var cluster = try RaftHarness(["a", "b", "c"])
        cluster.elect("a")
        cluster.propose("a", ["x", "y"])
        cluster.advance(to: cluster.now + 0.2, deliver: true)
        let actions = cluster.replicas["b"]!.receive(.installSnapshot(RaftInstallSnapshot(term: 1, snapshot: RaftSnapshot(index: 2, term: 1, data: "old"))), from: "a", now: cluster.now)
        #expect(actions == [.send(to: "a", .appendEntriesResponse(.accepted(term: 1, matchIndex: 3)))])
    }
}
