import Testing
@testable import SpokesConsensus

@Suite struct RaftElectionTests {
    @Test func aFollowerThatHearsNothingAsksForPreVotesWithoutRaisingItsTerm() throws {
        var cluster = try RaftHarness(["a", "b", "c"])
        cluster.now = 0.5
        cluster.tick("a")
        #expect(cluster.inFlight.isEmpty, "no election before the shortest timeout")
        cluster.now = 1.3
        cluster.tick("a")
        #expect(cluster["a"].role == .preCandidate)
        #expect(cluster["a"].term == 0)
        #expect(cluster.messages(from: "a", kind: "preVote").map(\.to) == ["b", "c"])
        #expect(cluster.messages(from: "a").allSatisfy { $0.message.term == 1 })
        #expect(cluster.writes["a"] == nil, "a pre-vote persists nothing")
    }

    @Test func aMajorityOfPreVotesStartsTheElectionAndItsVoteIsPersistedWithTheRequests() throws {
        var cluster = try RaftHarness(["a", "b", "c"])
        cluster.now = 1.3
        cluster.tick("a")
        cluster.deliverFirst { $0.to == "b" }
        #expect(cluster["b"].term == 0, "granting a pre-vote changes nothing")
        cluster.instantDisk = false
        let actions = cluster.replicas["a"]!.receive(cluster.inFlight.removeLast().message, from: "b", now: cluster.now)
        #expect(cluster.replicas["a"]!.role == .candidate)
        #expect(cluster.replicas["a"]!.term == 1)
        guard case .persist(let write) = actions.first else { Issue.record("the batch does not start with the vote's persist: \(actions)"); return }
        #expect(write.hardState == RaftHardState(term: 1, votedFor: "a"))
        #expect(actions.contains { if case .send(_, .requestVote(let request)) = $0 { request.term == 1 } else { false } })
    }

    @Test func aCandidateWithAMajorityLeadsAndAppendsANoOp() throws {
        var cluster = try RaftHarness(["a", "b", "c"])
        cluster.elect("a")
        #expect(cluster.leaders == ["a"])
        #expect(cluster["a"].term == 1)
        #expect(cluster["a"].entry(at: 1) == RaftEntry(index: 1, term: 1, command: nil))
        #expect(cluster["b"].leader == "a" && cluster["c"].leader == "a")
        #expect(cluster["a"].commitIndex == 1, "the no-op commits once a majority holds it")
    }

    @Test func aReplicaVotesAtMostOncePerTerm() throws {
        var cluster = try RaftHarness(["a", "b", "c"])
        let last = RaftLogPosition(index: 0, term: 0)
        cluster.handle("b", cluster.replicas["b"]!.receive(.requestVote(RaftVoteRequest(term: 1, last: last)), from: "a", now: 0))
        cluster.handle("b", cluster.replicas["b"]!.receive(.requestVote(RaftVoteRequest(term: 1, last: last)), from: "c", now: 0))
        let answers = cluster.messages(from: "b").map { ($0.to, $0.message) }
        #expect(answers.count == 2)
        #expect(answers[0].0 == "a" && answers[0].1 == .requestVoteResponse(RaftVoteResponse(term: 1, granted: true)))
        #expect(answers[1].0 == "c" && answers[1].1 == .requestVoteResponse(RaftVoteResponse(term: 1, granted: false)))
        #expect(cluster.durable["b"]!.hardState == RaftHardState(term: 1, votedFor: "a"))
    }

    @Test func aReplicaRefusesACandidateWhoseLogIsBehind() throws {
        var cluster = try RaftHarness(["a", "b", "c"])
        cluster.elect("a")
        cluster.propose("a", ["x"])
        cluster.deliverAll()
        // b holds 1@1, 2@1. A candidate with a shorter log of the same term, or an older
        // last term, is refused; one at least as up to date is granted.
        for (last, granted) in [(RaftLogPosition(index: 1, term: 1), false), (RaftLogPosition(index: 5, term: 0), false), (RaftLogPosition(index: 2, term: 1), true)] {
            var replica = cluster["b"]
            let actions = replica.receive(.requestVote(RaftVoteRequest(term: 2, last: last, transfer: true)), from: "c", now: cluster.now)
            #expect(actions.contains(.send(to: "c", .requestVoteResponse(RaftVoteResponse(term: 2, granted: granted)))), "last \(last)")
        }
    }

    @Test func aReplicaRejoiningFromAPartitionDoesNotDeposeAHealthyLeader() throws {
        var cluster = try RaftHarness(["a", "b", "c"])
        cluster.elect("a")
        let term = cluster["a"].term
        // c is cut off for 5 s: it keeps asking for pre-votes, never raising its term.
        func cutOff(_ envelope: RaftHarness.Envelope) -> Bool { envelope.from == "c" || envelope.to == "c" }
        var time = cluster.now + 5
        while cluster.now < time {
            cluster.now += 0.01
            cluster.tickAll()
            cluster.deliverAll(dropping: cutOff)
        }
        #expect(cluster["c"].term == term, "PreVote kept c's term")
        #expect(cluster["c"].role == .preCandidate)
        // Healed: c's pre-votes are refused (a leads, b heard from a recently) and c
        // follows a again; nobody's term moved.
        time = cluster.now + 2
        while cluster.now < time {
            cluster.now += 0.01
            cluster.tickAll()
            cluster.deliverAll()
        }
        #expect(cluster.leaders == ["a"])
        #expect(cluster.names.allSatisfy { cluster[$0].term == term })
        #expect(cluster["c"].leader == "a")
    }

    @Test func aReplicaThatHeardFromItsLeaderIgnoresRequestVote() throws {
        var cluster = try RaftHarness(["a", "b", "c"])
        cluster.elect("a")
        let term = cluster["b"].term
        let actions = cluster.replicas["b"]!.receive(.requestVote(RaftVoteRequest(term: term + 5, last: RaftLogPosition(index: 99, term: term))), from: "c", now: cluster.now + 0.1)
        #expect(actions.isEmpty, "within the lease a vote request is ignored: \(actions)")
        #expect(cluster["b"].term == term)
        let transfer = cluster.replicas["b"]!.receive(.requestVote(RaftVoteRequest(term: term + 5, last: RaftLogPosition(index: 99, term: term), transfer: true)), from: "c", now: cluster.now + 0.1)
        #expect(transfer.contains(.send(to: "c", .requestVoteResponse(RaftVoteResponse(term: term + 5, granted: true)))), "a transfer's election passes the lease")
    }

    @Test func aLeaderCutOffFromTheMajorityStepsDownWithinThreeElectionTimeouts() throws {
        var cluster = try RaftHarness(["a", "b", "c"])
        cluster.elect("a")
        let start = cluster.now
        while cluster.now < start + 3 * cluster.configuration.electionTimeout.lowerBound + 0.02 {
            cluster.now += 0.01
            cluster.tick("a")
            cluster.dropAll()
        }
        #expect(cluster["a"].role == .follower)
        #expect(cluster["a"].leader == nil)
        #expect(cluster.propose("a", ["x"]) == .notLeader(leaderHint: nil), "a cut-off leader accepts nothing")
    }

    /// A node whose timers stalled (paused, or its threads starved) has not read its peers'
    /// messages either: it judges nobody on the silence of the stall.
    @Test func aReplicaWhoseTimersStalledJudgesNobodyOnTheStallsSilence() throws {
        // Elected, then a quorum check (its followers heard), then a stall from just after it.
        func stalled() throws -> RaftHarness {
            var cluster = try RaftHarness(["a", "b", "c"])
            cluster.elect("a")
            cluster.now += cluster.configuration.electionTimeout.lowerBound + 0.01
            cluster.tick("a")
            #expect(cluster["a"].role == .leader)
            cluster.dropAll()
            cluster.now += 2 * cluster.configuration.electionTimeout.upperBound
            return cluster
        }
        var cluster = try stalled()
        cluster.handle("a", cluster.replicas["a"]!.timersResumed(now: cluster.now))
        cluster.handle("b", cluster.replicas["b"]!.timersResumed(now: cluster.now))
        cluster.tick("a")
        cluster.tick("b")
        #expect(cluster["b"].role == .follower && cluster.messages(from: "b", kind: "preVote").isEmpty, "the follower starts a fresh timeout")
        cluster.deliverAll()
        cluster.now += cluster.configuration.electionTimeout.lowerBound + 0.01
        cluster.tickAll()
        cluster.deliverAll()
        #expect(cluster.leaders == ["a"], "their messages, read after the stall, keep the leader leading")
        var again = try stalled()
        again.handle("a", again.replicas["a"]!.timersResumed(now: again.now))
        again.now += again.configuration.electionTimeout.lowerBound - 0.01
        again.handle("a", again.replicas["a"]!.timersResumed(now: again.now))
        for _ in 0..<2 {
            again.now += again.configuration.electionTimeout.lowerBound + 0.01
            again.tick("a")
            again.dropAll()
        }
        #expect(again["a"].role == .follower, "a second stall within the forgiven window is not forgiven: a cut-off leader still steps down")
    }

    /// CheckQuorum on a busy node: one window in which the leader heard from no majority (a
    /// follower busy for 0.7 s) is not enough to step down; two are.
    @Test func aLeaderStepsDownAfterTwoQuietWindowsNotOne() throws {
        var cluster = try RaftHarness(["a", "b", "c"])
        cluster.elect("a")
        let window = cluster.configuration.electionTimeout.lowerBound + 0.01
        cluster.now += window
        cluster.tick("a")
        cluster.dropAll()
        cluster.now += window
        cluster.tick("a")
        #expect(cluster["a"].role == .leader, "one quiet window")
        cluster.deliverAll()
        cluster.now += window
        cluster.tick("a")
        #expect(cluster["a"].role == .leader, "heard again: the count starts over")
        for _ in 0..<2 {
            cluster.dropAll()
            cluster.now += window
            cluster.tick("a")
        }
        #expect(cluster["a"].role == .follower, "two quiet windows in a row")
    }

    @Test func aLeaderThatHearsFromItsFollowersKeepsLeading() throws {
        var cluster = try RaftHarness(["a", "b", "c"])
        cluster.elect("a")
        let start = cluster.now
        while cluster.now < start + 5 {
            cluster.now += 0.01
            cluster.tickAll()
            cluster.deliverAll(dropping: { $0.from == "c" || $0.to == "c" })
        }
        #expect(cluster.leaders == ["a"], "one follower answering keeps a majority")
    }

    @Test func aLeaderSeeingAHigherTermStepsDown() throws {
        var cluster = try RaftHarness(["a", "b", "c"])
        cluster.elect("a")
        let term = cluster["a"].term
        cluster.handle("a", cluster.replicas["a"]!.receive(.heartbeatResponse(RaftHeartbeatResponse(term: term + 1)), from: "b", now: cluster.now))
        #expect(cluster["a"].role == .follower)
        #expect(cluster["a"].term == term + 1)
        #expect(cluster.durable["a"]!.hardState == RaftHardState(term: term + 1, votedFor: nil))
    }

    @Test func aStaleLeaderIsToldTheNewTerm() throws {
        var cluster = try RaftHarness(["a", "b", "c"])
        cluster.elect("a")
        cluster.elect("b")
        #expect(cluster.leaders.contains("b"))
        let old = cluster["a"].term - 1
        let answer = cluster.replicas["c"]!.receive(.appendEntries(RaftAppendEntries(term: old, previous: RaftLogPosition(index: 0, term: 0), entries: [], commit: 0)), from: "a", now: cluster.now)
        // With the newer term, and without a refusal (see anOlderTermsAppendIsAnsweredWithoutARefusal).
        #expect(answer.contains { if case .send("a", .appendEntriesResponse(let response)) = $0 { response.success && response.matchIndex == 0 && response.term == old + 1 } else { false } })
    }

    @Test func electionTimeoutsFollowTheSeed() throws {
        let group = try RaftGroup(replicas: ["a", "b"])
        func deadline(seed: UInt64) throws -> Double {
            var replica = try RaftReplica(id: "a", group: group, seed: seed)
            _ = replica.start(now: 0)
            return replica.nextDeadline
        }
        #expect(try deadline(seed: 1) == deadline(seed: 1))
        #expect(try deadline(seed: 1) != deadline(seed: 2))
        let draws = try (1...50).map { try deadline(seed: $0) }
        #expect(draws.allSatisfy { (0.6...1.2).contains($0) })
        #expect(draws.max()! - draws.min()! > 0.4, "timeouts spread over the range")
    }

    @Test func aSingleReplicaElectsItselfAtOnce() throws {
        let cluster = try RaftHarness(["solo"])
        #expect(cluster["solo"].role == .leader)
        #expect(cluster["solo"].term == 1)
        #expect(cluster["solo"].commitIndex == 1, "its no-op committed on its own flush")
    }
}
