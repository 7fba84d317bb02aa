import Foundation
import Testing
@testable import SpokesConsensus

@Suite struct RaftBootstrapTests {
    @Test func theFirstLeaderLeadsTermOneFromItsFirstStep() throws {
        var cluster = try RaftHarness(["a", "b", "c"], firstLeader: "b")
        #expect(cluster.leaders == ["b"])
        #expect(cluster.names.allSatisfy { cluster[$0].term == 1 && cluster[$0].votedFor == "b" })
        #expect(cluster["a"].leader == "b" && cluster["c"].leader == "b")
        #expect(cluster.propose("b", ["x"]) == .accepted(term: 1, indices: 2..<3))
        cluster.deliverAll()
        #expect(cluster["b"].commitIndex == 2)
    }

    @Test func eachGroupCanPlaceItsFirstLeaderElsewhere() throws {
        for leader in ["a", "b", "c"] {
            let cluster = try RaftHarness(["a", "b", "c"], firstLeader: leader)
            #expect(cluster.leaders == [leader])
        }
    }

    @Test func nobodyElseCanWinTermOne() throws {
        let group = try RaftGroup(replicas: ["a", "b", "c"], firstLeader: "b")
        var replica = try RaftReplica(id: "a", group: group, seed: 1)
        let actions = replica.receive(.requestVote(RaftVoteRequest(term: 1, last: RaftLogPosition(index: 0, term: 0), transfer: true)), from: "c", now: 10)
        #expect(actions.contains(.send(to: "c", .requestVoteResponse(RaftVoteResponse(term: 1, granted: false)))))
        var candidate = try RaftReplica(id: "c", group: group, seed: 1)
        _ = candidate.start(now: 0)
        _ = candidate.tick(now: 10)
        _ = candidate.receive(.preVoteResponse(RaftVoteResponse(term: 2, granted: true)), from: "a", now: 10)
        #expect(candidate.role == .candidate)
        #expect(candidate.term == 2, "a rival's first election is for term 2")
    }

    @Test func aFirstLeaderRestartedAfterItsFirstWriteIsAFollower() throws {
        var cluster = try RaftHarness(["a", "b", "c"], firstLeader: "a")
        #expect(cluster.durable["a"]!.entries.count == 1)
        try cluster.restart("a")
        #expect(cluster["a"].role == .follower)
        #expect(cluster["a"].term == 1)
    }

    /// Review (issue 29 §1.6): a first leader restarted in term 1 named itself leader while
    /// a follower, and granted itself a lease that refused its peers' votes.
    @Test func aRestartedReplicaInTermOneNamesNoLeaderAndGrantsNoLease() throws {
        var cluster = try RaftHarness(["a", "b", "c"], firstLeader: "a")
        cluster.deliverAll()
        try cluster.restart("a")
        _ = cluster.replicas["a"]!.start(now: cluster.now)
        #expect(cluster["a"].role == .follower)
        #expect(cluster["a"].leader == nil, "it has heard from no leader since it restarted, and is none")
        try cluster.restart("b")
        _ = cluster.replicas["b"]!.start(now: cluster.now)
        #expect(cluster["b"].leader == nil)
        // Out of lease: it grants a pre-vote at once to a peer whose log is as up to date.
        let last = cluster["b"].lastLogPosition
        let actions = cluster.replicas["b"]!.receive(.preVote(RaftVoteRequest(term: 2, last: last)), from: "c", now: cluster.now)
        #expect(actions.contains(.send(to: "c", .preVoteResponse(RaftVoteResponse(term: 2, granted: true)))), "\(actions)")
    }

    @Test func aNewGroupsFollowerTakesItsFirstLeaderWithALease() throws {
        let group = try RaftGroup(replicas: ["a", "b", "c"], firstLeader: "a")
        var replica = try RaftReplica(id: "b", group: group, seed: 1)
        _ = replica.start(now: 0)
        #expect(replica.leader == "a")
        let actions = replica.receive(.preVote(RaftVoteRequest(term: 2, last: RaftLogPosition(index: 0, term: 0))), from: "c", now: 0.1)
        #expect(actions.contains(.send(to: "c", .preVoteResponse(RaftVoteResponse(term: 1, granted: false)))), "in its lease: \(actions)")
    }

    /// Review (issue 29 §1.7): a group made again under the same id is another definition,
    /// so replicas that hold the first refuse it; definitions written before the creation
    /// number existed still read.
    @Test func aGroupCreatedAgainIsAnotherDefinition() throws {
        let first = try RaftGroup(replicas: ["a", "b", "c"], firstLeader: "a", creation: 1)
        let again = try RaftGroup(replicas: ["a", "b", "c"], firstLeader: "a", creation: 2)
        #expect(first != again)
        let encoded = try JSONEncoder().encode(first)
        #expect(try JSONDecoder().decode(RaftGroup.self, from: encoded) == first)
        let older = try JSONDecoder().decode(RaftGroup.self, from: Data(#"{"replicas":["a","b"],"firstLeader":"a"}"#.utf8))
        #expect(older == (try RaftGroup(replicas: ["a", "b"], firstLeader: "a")) && older.creation == nil)
    }

    @Test func aGroupDefinitionIsChecked() {
        #expect(throws: RaftGroup.DefinitionError.noReplicas) { try RaftGroup(replicas: []) }
        #expect(throws: RaftGroup.DefinitionError.repeatedReplica("a")) { try RaftGroup(replicas: ["a", "b", "a"]) }
        #expect(throws: RaftGroup.DefinitionError.firstLeaderNotAReplica("d")) { try RaftGroup(replicas: ["a", "b"], firstLeader: "d") }
        #expect(throws: RaftReplica.StartError.notAReplica("z")) { try RaftReplica(id: "z", group: RaftGroup(replicas: ["a"]), seed: 1) }
    }

    @Test func aDurableStateWithAGapIsRefused() throws {
        let group = try RaftGroup(replicas: ["a", "b"])
        let state = RaftDurableState(hardState: RaftHardState(term: 1, votedFor: nil), entries: [RaftEntry(index: 1, term: 1, command: nil), RaftEntry(index: 3, term: 1, command: nil)])
        #expect(throws: RaftReplica.StartError.inconsistentState("entry 3 where 2 was expected")) { try RaftReplica(id: "a", group: group, state: state, seed: 1) }
    }
}
