import Testing
@testable import SpokesConsensus

@Suite struct RaftReplicationTests {
    static func entries(_ terms: [Int]) -> [RaftEntry] {
        terms.enumerated().map { RaftEntry(index: $0.offset + 1, term: $0.element, command: "e\($0.offset + 1)") }
    }

    @Test func aLeaderReplicatesProposalsAndEveryReplicaAppliesThemInOrder() throws {
        var cluster = try RaftHarness(["a", "b", "c"])
        cluster.elect("a")
        #expect(cluster.propose("a", ["x", "y"]) == .accepted(term: 1, indices: 2..<4))
        cluster.deliverAll()
        #expect(cluster["a"].commitIndex == 3)
        #expect(cluster.commands(appliedBy: "a") == ["x", "y"])
        cluster.advance(to: cluster.now + 0.2, deliver: true)
        for name in cluster.names {
            #expect(cluster.commands(appliedBy: name) == ["x", "y"], "\(name)")
            #expect(cluster.applied[name]!.map(\.index) == [1, 2, 3], "\(name) applies each index once, in order")
        }
    }

    @Test func aFollowerRefusesProposalsAndNamesTheLeader() throws {
        var cluster = try RaftHarness(["a", "b", "c"])
        cluster.elect("a")
        #expect(cluster.propose("b", ["x"]) == .notLeader(leaderHint: "a"))
    }

    @Test func theLeaderCountsItsOwnLogOnlyOnceItIsPersisted() throws {
        var cluster = try RaftHarness(["a", "b", "c"])
        cluster.elect("a")
        cluster.instantDisk = false
        cluster.propose("a", ["x"])
        cluster.deliverFirst { $0.to == "b" && $0.message.kind == "appendEntries" }
        cluster.flush("b")
        cluster.deliverFirst { $0.to == "a" && $0.message.kind == "appendEntriesResponse" }
        #expect(cluster["a"].commitIndex == 1, "b alone is not a majority while a's own write is not durable")
        cluster.flush("a")
        #expect(cluster["a"].commitIndex == 2)
        #expect(cluster.commands(appliedBy: "a") == ["x"])
    }

    @Test func aFollowersAcknowledgementTravelsInTheBatchThatPersistsTheEntries() throws {
        var cluster = try RaftHarness(["a", "b", "c"])
        cluster.elect("a")
        cluster.propose("a", ["x"])
        let append = cluster.messages(to: "b", kind: "appendEntries")[0]
        var follower = cluster["b"]
        let actions = follower.receive(append.message, from: "a", now: cluster.now)
        guard case .persist(let write) = actions.first else { Issue.record("no persist first: \(actions)"); return }
        #expect(write.entries.map(\.command) == ["x"])
        #expect(actions.contains(.send(to: "a", .appendEntriesResponse(.accepted(term: 1, matchIndex: 2)))))
    }

    /// Review (issue 29 §1.6): an AppendEntries of an older term was answered with a
    /// refusal naming its index, which a sender that leads the current term by the time it
    /// arrives takes for a current one; etcd answers without refusing.
    @Test func anOlderTermsAppendIsAnsweredWithoutARefusal() throws {
        let group = try RaftGroup(replicas: ["a", "b", "c"])
        let state = RaftDurableState(hardState: RaftHardState(term: 5, votedFor: nil), entries: [RaftEntry(index: 1, term: 5, command: nil)])
        var replica = try RaftReplica(id: "b", group: group, state: state, seed: 1)
        _ = replica.start(now: 0)
        let stale = RaftAppendEntries(term: 3, previous: RaftLogPosition(index: 7, term: 3), entries: [], commit: 0)
        let actions = replica.receive(.appendEntries(stale), from: "a", now: 1)
        let answers = actions.compactMap { action -> RaftAppendEntriesResponse? in
            if case .send("a", .appendEntriesResponse(let response)) = action { response } else { nil }
        }
        #expect(answers.count == 1)
        #expect(answers.first?.term == 5, "the sender learns the newer term")
        #expect(answers.first?.success == true && answers.first?.matchIndex == 0 && answers.first?.rejectedIndex == 0, "no refusal naming its old append: \(answers)")
        #expect(replica.term == 5 && replica.lastLogPosition.index == 1, "nothing changed here")
    }

    @Test func aSingleReplicaCommitsAfterItsOwnFlush() throws {
        var cluster = try RaftHarness(["solo"])
        cluster.instantDisk = false
        #expect(cluster.propose("solo", ["x"]) == .accepted(term: 1, indices: 2..<3))
        #expect(cluster["solo"].commitIndex == 1)
        cluster.flush("solo")
        #expect(cluster["solo"].commitIndex == 2)
        #expect(cluster.commands(appliedBy: "solo") == ["x"])
    }

    @Test func followersLearnTheCommitIndexFromTheNextHeartbeat() throws {
        var cluster = try RaftHarness(["a", "b", "c"])
        cluster.elect("a")
        cluster.propose("a", ["x"])
        cluster.deliverAll()
        #expect(cluster["b"].commitIndex == 1)
        cluster.advance(to: cluster.now + cluster.configuration.heartbeatInterval + 0.01, deliver: true)
        #expect(cluster["b"].commitIndex == 2)
        #expect(cluster.commands(appliedBy: "b") == ["x"])
    }

    @Test func conflictingEntriesAreReplacedAndTheHintSkipsAWholeTermPerRoundTrip() throws {
        var cluster = try RaftHarness(["a", "b", "c"])
        let leaderLog = RaftDurableState(hardState: RaftHardState(term: 3, votedFor: nil), entries: Self.entries([1, 1, 3, 3, 3, 3]))
        try cluster.restore("a", leaderLog)
        try cluster.restore("c", leaderLog)
        try cluster.restore("b", RaftDurableState(hardState: RaftHardState(term: 2, votedFor: nil), entries: Self.entries([1, 1, 2, 2, 2, 2, 2, 2])))
        cluster.now += 5
        cluster.tick("a")
        cluster.deliverAll()
        #expect(cluster.leaders == ["a"])
        // The probe after 6@3 meets b's 6@2: refused with term 2, which starts at 3 in
        // b's log; a holds no term 2, so it retries after 2 and succeeds. One refusal,
        // not four.
        #expect(cluster.refusals(from: "b").count == 1)
        for index in 1...7 { #expect(cluster["b"].entry(at: index) == cluster["a"].entry(at: index), "index \(index)") }
        #expect(cluster["b"].lastLogPosition == cluster["a"].lastLogPosition)
        #expect(cluster.durable["b"]!.entries == cluster.durable["a"]!.entries, "the truncation reached b's storage")
    }

    @Test func aShorterFollowerIsProbedFromItsEnd() throws {
        var cluster = try RaftHarness(["a", "b", "c"])
        let leaderLog = RaftDurableState(hardState: RaftHardState(term: 2, votedFor: nil), entries: Self.entries([1, 1, 2, 2, 2, 2, 2, 2, 2, 2]))
        try cluster.restore("a", leaderLog)
        try cluster.restore("c", leaderLog)
        try cluster.restore("b", RaftDurableState(hardState: RaftHardState(term: 1, votedFor: nil), entries: Self.entries([1, 1])))
        cluster.now += 5
        cluster.tick("a")
        cluster.deliverAll()
        let refusals = cluster.refusals(from: "b")
        #expect(refusals.count == 1)
        #expect(refusals.first?.conflictIndex == 3 && refusals.first?.conflictTerm == nil)
        #expect(cluster["b"].lastLogPosition == cluster["a"].lastLogPosition)
    }

    /// Raft §5.4.2 (the paper's Figure 8): a leader must not commit an entry of an
    /// earlier term because a majority holds it; only its own term's entries commit by
    /// counting, and the earlier ones with them.
    @Test func anEarlierTermsEntryIsNotCommittedByCounting() throws {
        var cluster = try RaftHarness(["a", "b", "c"], configuration: RaftConfiguration(maxEntriesPerMessage: 1))
        try cluster.restore("a", RaftDurableState(hardState: RaftHardState(term: 2, votedFor: nil), entries: Self.entries([1, 2])))
        try cluster.restore("b", RaftDurableState(hardState: RaftHardState(term: 2, votedFor: nil), entries: Self.entries([1])))
        try cluster.restore("c", RaftDurableState(hardState: RaftHardState(term: 2, votedFor: nil), entries: Self.entries([1])))
        cluster.now += 5
        cluster.tick("a")
        while let envelope = cluster.deliverFirst(where: { $0.message.kind != "appendEntries" }) { _ = envelope }
        #expect(cluster.leaders == ["a"])
        #expect(cluster["a"].term == 3)
        // b's probe at 3 is refused; then 2@2 alone goes to b (one entry per message).
        while let envelope = cluster.deliverFirst(where: { $0.to == "b" || $0.from == "b" }) {
            if case .appendEntries(let append) = envelope.message, append.entries.first?.index == 2 { break }
        }
        cluster.deliverFirst { $0.from == "b" && $0.message.kind == "appendEntriesResponse" }
        #expect(cluster["b"].entry(at: 2)?.term == 2)
        #expect(cluster["a"].commitIndex == 0, "2@2 is on a majority, but is of an earlier term")
        cluster.deliverAll(dropping: { $0.to == "c" })
        #expect(cluster["a"].commitIndex == 3, "the term-3 no-op commits, and 2@2 with it")
    }

    @Test func entriesArePipelinedInBoundedBatches() throws {
        var cluster = try RaftHarness(["a", "b", "c"], configuration: RaftConfiguration(maxEntriesPerMessage: 100, maxMessagesInFlight: 4))
        cluster.elect("a")
        cluster.propose("a", (1...1000).map { "c\($0)" })
        let appends = cluster.messages(to: "b", kind: "appendEntries").compactMap { if case .appendEntries(let append) = $0.message { append } else { nil } }
        #expect(appends.map(\.entries.count) == [100, 100, 100, 100], "four messages in flight, a hundred entries each")
        #expect(appends.map(\.previous.index) == [1, 101, 201, 301])
        cluster.deliverAll()
        #expect(cluster["a"].commitIndex == 1001)
        #expect(cluster["b"].lastLogPosition.index == 1001)
    }

    @Test func messagesRespectTheByteBudgetButCarryAtLeastOneEntry() throws {
        var cluster = try RaftHarness(["a", "b"], configuration: RaftConfiguration(maxBytesPerMessage: 1000))
        cluster.elect("a")
        cluster.propose("a", [String(repeating: "x", count: 5000), "small", "small"])
        let counts = cluster.messages(to: "b", kind: "appendEntries").compactMap { if case .appendEntries(let append) = $0.message { append.entries.count } else { nil } }
        #expect(counts == [1, 2])
    }

    @Test func aLostAppendIsRecoveredAfterAHeartbeat() throws {
        var cluster = try RaftHarness(["a", "b", "c"])
        cluster.elect("a")
        cluster.propose("a", ["x"])
        cluster.dropAll()
        #expect(cluster["a"].commitIndex == 1)
        cluster.advance(to: cluster.now + 0.3, deliver: true)
        #expect(cluster["a"].commitIndex == 2)
        #expect(cluster.names.allSatisfy { cluster.commands(appliedBy: $0) == ["x"] })
    }

    @Test func aLeaderHandsOverLeadershipOnRequest() throws {
        var cluster = try RaftHarness(["a", "b", "c"])
        cluster.elect("a")
        cluster.propose("a", ["x"])
        cluster.handle("a", cluster.replicas["a"]!.transferLeadership(to: "b", now: cluster.now))
        #expect(cluster.propose("a", ["y"]) == .notLeader(leaderHint: "b"), "no proposals while handing over")
        cluster.deliverAll()
        #expect(cluster.leaders == ["b"])
        #expect(cluster["b"].term == 2)
        #expect(cluster.propose("b", ["z"]) == .accepted(term: 2, indices: 4..<5))
        cluster.deliverAll()
        cluster.advance(to: cluster.now + 0.2, deliver: true)
        #expect(cluster.names.allSatisfy { cluster.commands(appliedBy: $0) == ["x", "z"] })
    }

    @Test func anUnfinishedTransferIsAbandonedAndProposalsResume() throws {
        var cluster = try RaftHarness(["a", "b", "c"])
        cluster.elect("a")
        cluster.handle("a", cluster.replicas["a"]!.transferLeadership(to: "b", now: cluster.now))
        cluster.dropAll()
        let end = cluster.now + cluster.configuration.electionTimeout.upperBound + 0.05
        while cluster.now < end {
            cluster.now += 0.01
            cluster.tick("a")
            cluster.deliverAll(dropping: { $0.message.kind == "timeoutNow" })
        }
        #expect(cluster.leaders == ["a"])
        #expect(cluster.propose("a", ["y"]) == .accepted(term: 1, indices: 2..<3))
    }
}
