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
