import Foundation
import Testing
@testable import SpokesConsensus

/// Single-server membership changes (``RaftReplica/proposeReplicas(_:now:)``): how a
/// group replaces a dead replica, one change at a time, and the rules that keep two
/// majorities from deciding apart.
@Suite struct RaftMembershipChangeTests {
    /// Three replicas led by a; c's node is dead (everything to or from it is lost).
    func groupWithDeadC() throws -> RaftHarness {
        var cluster = try RaftHarness(["a", "b", "c"], firstLeader: "a")
        cluster.propose("a", ["x", "y"])
        cluster.deliverAll(dropping: { $0.to == "c" || $0.from == "c" })
        return cluster
    }

    @Test func aDeadReplicaIsRemovedThenANewOneAddedAndCatchesUpFromTheLog() throws {
        var cluster = try groupWithDeadC()
        let dead: (RaftHarness.Envelope) -> Bool = { $0.to == "c" || $0.from == "c" }
        try cluster.proposeReplicas("a", ["a", "b"])
        cluster.deliverAll(dropping: dead)
        #expect(cluster["a"].replicas == ["a", "b"] && cluster["b"].replicas == ["a", "b"])
        #expect(cluster["a"].commitIndex == 4, "the change commits with a and b alone")
        try cluster.join("d", replicas: ["a", "b", "d"])
        try cluster.proposeReplicas("a", ["a", "b", "d"])
        cluster.advance(to: cluster.now + 0.5, deliver: true)
        cluster.deliverAll(dropping: dead)
        #expect(cluster["d"].replicas == ["a", "b", "d"])
        #expect(cluster.commands(appliedBy: "d") == ["x", "y"], "the new replica applies the whole log")
        cluster.propose("a", ["z"])
        cluster.advance(to: cluster.now + 0.3, deliver: true)
        #expect(cluster.commands(appliedBy: "d") == ["x", "y", "z"])
        #expect(cluster["a"].commitIndex == cluster["a"].lastLogPosition.index)
    }

    @Test func aNewReplicaCatchesUpFromTheSnapshotAndLearnsTheReplicasFromIt() throws {
        var cluster = try groupWithDeadC()
        let dead: (RaftHarness.Envelope) -> Bool = { $0.to == "c" || $0.from == "c" }
        try cluster.proposeReplicas("a", ["a", "b"])
        cluster.deliverAll(dropping: dead)
        cluster.handle("a", try cluster.replicas["a"]!.compact(through: 4, snapshot: "x,y"))
        #expect(cluster.durable["a"]!.snapshot?.replicas == ["a", "b"], "the snapshot records the configuration it covers")
        try cluster.join("d", replicas: ["a", "b", "d"])
        try cluster.proposeReplicas("a", ["a", "b", "d"])
        cluster.advance(to: cluster.now + 0.5, deliver: true)
        cluster.deliverAll(dropping: dead)
        #expect(cluster.snapshotsApplied["d"]?.map(\.data) == ["x,y"])
        #expect(cluster["d"].replicas == ["a", "b", "d"])
        #expect(cluster["d"].commitIndex == cluster["a"].commitIndex)
        try cluster.restart("d")
        #expect(cluster["d"].replicas == ["a", "b", "d"], "a restart finds the configuration in its log and snapshot")
    }

    @Test func oneChangeAtATimeOfOneReplicaAfterTheLeadersTermCommitted() throws {
        var cluster = try groupWithDeadC()
        #expect(throws: RaftReplica.ConfigurationChangeError.notOneChange(from: ["a", "b", "c"], to: ["a", "d", "e"])) {
            try cluster.proposeReplicas("a", ["a", "d", "e"])
        }
        try cluster.proposeReplicas("a", ["a", "b"])
        #expect(throws: RaftReplica.ConfigurationChangeError.changePending(index: 4)) {
            try cluster.proposeReplicas("a", ["a", "b", "d"])
        }
        cluster.deliverAll(dropping: { $0.to == "c" || $0.from == "c" })
        // a restarts, and b takes over: until its term's first entry commits, it changes nothing.
        try cluster.restart("a")
        cluster.now += cluster.configuration.electionTimeout.upperBound * 3
        cluster.tick("b")
        cluster.deliverFirst { $0.to == "a" }
        cluster.deliverFirst { $0.to == "b" }
        cluster.deliverFirst { $0.to == "a" }
        cluster.deliverFirst { $0.to == "b" }
        #expect(cluster["b"].role == .leader)
        #expect(throws: RaftReplica.ConfigurationChangeError.termNotCommitted(term: cluster["b"].term)) {
            try cluster.proposeReplicas("b", ["a", "b", "d"])
        }
    }

    @Test func aLeaderThatRemovesItselfStepsDownOnceItCommitsAndNeverCampaignsAgain() throws {
        var cluster = try RaftHarness(["a", "b", "c"], firstLeader: "a")
        cluster.propose("a", ["x"])
        cluster.deliverAll()
        try cluster.proposeReplicas("a", ["b", "c"])
        #expect(cluster["a"].role == .leader, "it leads until the change commits")
        cluster.deliverAll()
        #expect(cluster["a"].role == .follower)
        cluster.advance(to: cluster.now + 5, deliver: true)
        #expect(cluster.leaders.count == 1 && cluster.leaders != ["a"])
        #expect(cluster["a"].term < cluster[cluster.leaders[0]].term || cluster["a"].role == .follower)
        #expect(!cluster.delivered.contains { $0.from == "a" && ($0.message.kind == "preVote" || $0.message.kind == "requestVote") })
    }

    @Test func aConfigurationEntryTruncatedByANewLeaderIsForgotten() throws {
        var cluster = try RaftHarness(["a", "b", "c"], firstLeader: "a")
        cluster.propose("a", ["x"])
        cluster.deliverAll()
        try cluster.proposeReplicas("a", ["a", "b"])
        cluster.dropAll()
        #expect(cluster["a"].replicas == ["a", "b"], "a replica uses the latest configuration in its log, committed or not")
        cluster.elect("b")
        #expect(cluster["b"].role == .leader)
        cluster.advance(to: cluster.now + 1, deliver: true)
        #expect(cluster["a"].replicas == ["a", "b", "c"], "the entry was replaced by the new leader's, and its change with it")
        #expect(cluster["a"].role == .follower)
    }

    @Test func aRemovedReplicaThatComesBackCannotDisturbTheGroup() throws {
        var cluster = try groupWithDeadC()
        try cluster.proposeReplicas("a", ["a", "b"])
        cluster.deliverAll(dropping: { $0.to == "c" || $0.from == "c" })
        // c comes back with its old log and campaigns: nobody listens.
        cluster.dropAll()
        let term = cluster["a"].term
        cluster.now += 10
        cluster.tick("c")
        cluster.deliverAll()
        cluster.now += 10
        cluster.tick("c")
        cluster.deliverAll()
        #expect(cluster["a"].role == .leader && cluster["a"].term == term)
        #expect(cluster["b"].term == term)
    }

    @Test func configurationsSurviveTheDiskAndTheWire() throws {
        let entry = RaftEntry(index: 5, term: 2, command: nil, replicas: ["a", "b", "d"])
        let state = RaftDurableState(hardState: RaftHardState(term: 2, votedFor: "a"), entries: [])
        var withEntry = state
        withEntry.apply(RaftWrite(entries: [entry]))
        let snapshot = RaftSnapshot(index: 4, term: 2, data: "s", replicas: ["a", "b"])
        let recovered = try RaftLogFormat.recover(
            log: RaftLogFormat.compactedLog(for: RaftDurableState(hardState: state.hardState, snapshot: snapshot, entries: [entry])),
            snapshot: RaftLogFormat.snapshotFile(snapshot), logName: "log", snapshotName: "snapshot")
        #expect(recovered.state.entries == [entry])
        #expect(recovered.state.snapshot == snapshot)
        let append = RaftMessage.appendEntries(RaftAppendEntries(term: 2, previous: RaftLogPosition(index: 4, term: 2), entries: [entry], commit: 4))
        let decoded = try JSONDecoder().decode(RaftMessage.self, from: try JSONEncoder().encode(append))
        #expect(decoded == append && decoded.isWellFormed)
        let unsorted = RaftMessage.appendEntries(RaftAppendEntries(
            term: 2, previous: RaftLogPosition(index: 4, term: 2), entries: [RaftEntry(index: 5, term: 2, command: nil, replicas: ["b", "a"])], commit: 4))
        #expect(!unsorted.isWellFormed, "a peer's configuration must be sorted names without repeats")
    }
}
