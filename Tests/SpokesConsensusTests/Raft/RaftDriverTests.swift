import Testing
@testable import SpokesConsensus

/// The contract the node's runner and the simulator share, checked on its own.
@Suite struct RaftDriverTests {
    static let configuration = RaftConfiguration(heartbeatInterval: 0.1, electionTimeout: 0.6...1.2)

    static func driver(_ id: String = "a", group: [String] = ["a", "b", "c"], compactEvery: Int = .max) throws -> RaftDriver {
        let replica = try RaftReplica(id: id, group: RaftGroup(replicas: group, firstLeader: nil), configuration: configuration, seed: 1)
        return RaftDriver(replica: replica, compactEvery: compactEvery)
    }

    static func sends(_ effects: [RaftDriver.Effect]) -> [(String, [RaftMessage])] {
        effects.compactMap { if case .send(let peer, let messages) = $0 { (peer, messages) } else { nil } }
    }

    static func flushes(_ effects: [RaftDriver.Effect]) -> [(batch: Int, writes: [RaftWrite])] {
        effects.compactMap { if case .flush(let batch, let writes) = $0 { (batch, writes) } else { nil } }
    }

    /// Runs ticks from `from` until the replica asks for votes; the effects of that tick.
    static func tickUntilItCampaigns(_ driver: inout RaftDriver, from start: Double) -> (now: Double, effects: [RaftDriver.Effect]) {
        var now = start
        for _ in 0..<1000 {
            now += driver.nextTick(after: now)
            let effects = driver.tick(now: now)
            if !flushes(effects).isEmpty || !sends(effects).isEmpty { return (now, effects) }
        }
        Issue.record("no campaign within 1,000 ticks")
        return (now, [])
    }

    /// A one-replica group's driver, started and leading (its vote flushed): the time.
    static func leadingAlone(_ driver: inout RaftDriver) throws -> Double {
        var now = 0.0
        var effects = driver.start(now: 0)
        for _ in 0..<1000 where flushes(effects).isEmpty {
            now += driver.nextTick(after: now)
            effects = driver.tick(now: now)
        }
        let flush = try #require(flushes(effects).first, "a lone replica campaigns and writes its vote")
        now += 0.001
        _ = driver.flushed(batch: flush.batch, through: position(driver), now: now)
        #expect(driver.replica.role == .leader)
        return now
    }

    static func position(_ driver: RaftDriver) -> RaftLogPosition {
        RaftLogPosition(index: driver.replica.lastLogPosition.index, term: driver.replica.term)
    }

    @Test func aTickIsDueAtLeastEveryHeartbeatInterval() throws {
        var driver = try Self.driver()
        _ = driver.start(now: 0)
        // A follower's next deadline is its election timeout (0.6 s or more), yet the
        // shell ticks again within one heartbeat interval: the rule the simulator's own
        // copy once lacked.
        #expect(driver.replica.nextDeadline >= 0.6)
        #expect(driver.nextTick(after: 0) == 0.1)
        #expect(driver.nextTick(after: driver.replica.nextDeadline - 0.0001) >= 0.001)
    }

    @Test func aSendWaitsForTheWritesIssuedBeforeItToBeDurable() throws {
        // A single replica's campaign has no peer; use a pre-vote's follow-up in a group
        // of three: the vote for itself is written before its vote requests leave.
        var driver = try Self.driver()
        _ = driver.start(now: 0)
        var (now, effects) = Self.tickUntilItCampaigns(&driver, from: 0)
        // Pre-votes persist nothing and go out at once.
        #expect(Self.flushes(effects).isEmpty)
        #expect(Self.sends(effects).map(\.0).sorted() == ["b", "c"])
        let term = driver.replica.term
        effects = driver.receive(.preVoteResponse(RaftVoteResponse(term: term + 1, granted: true)), from: "b", now: now)
        // Now a candidate: its term and vote are written, and the vote requests wait.
        let flush = try #require(Self.flushes(effects).first)
        #expect(Self.sends(effects).isEmpty, "no request for votes before the vote for itself is durable")
        #expect(driver.flushing?.batch == flush.batch)
        now += 0.01
        effects = driver.flushed(batch: flush.batch, through: driver.replica.lastLogPosition, now: now)
        #expect(Self.sends(effects).map(\.0).sorted() == ["b", "c"], "released once durable")
        #expect(Self.sends(effects).allSatisfy { $0.1.allSatisfy { $0.kind == "requestVote" } })
    }

    @Test func writesIssuedDuringAFlushShareTheNextOne() throws {
        var driver = try Self.driver("a", group: ["a"])
        let now = try Self.leadingAlone(&driver)
        // The leader's first entry (its no-op) may be in flight; proposals made meanwhile
        // wait and then share one flush.
        var flushes: [(batch: Int, writes: [RaftWrite])] = []
        for command in ["x", "y", "z"] {
            let (proposal, effects) = driver.propose([command], now: now)
            guard case .accepted = proposal else { Issue.record("a leader accepts: \(proposal)"); return }
            flushes += Self.flushes(effects)
        }
        #expect(flushes.count <= 1, "at most one flush outstanding")
        let inFlight = try #require(driver.flushing)
        let next = driver.flushed(batch: inFlight.batch, through: Self.position(driver), now: now + 0.001)
        let shared = Self.flushes(next)
        if inFlight.writes.flatMap(\.entries).compactMap(\.command).count < 3 {
            #expect(shared.count == 1, "what waited goes in one flush")
            #expect(shared.first?.batch == driver.issued)
        }
    }

    @Test func aLoneLeaderStaysLeaderAcrossAStall() throws {
        // A tick a second late (ten heartbeat intervals): the driver tells the replica its
        // timers stalled, and a one-replica group, its own quorum, keeps leading.
        var driver = try Self.driver("a", group: ["a"])
        var now = try Self.leadingAlone(&driver)
        now += 1.0
        _ = driver.tick(now: now)
        #expect(driver.replica.role == .leader)
    }

    @Test func compactionWaitsUntilEnoughEntriesWereApplied() throws {
        var driver = try Self.driver("a", group: ["a"], compactEvery: 3)
        var now = try Self.leadingAlone(&driver)
        var pending: [(batch: Int, writes: [RaftWrite])] = []
        if let flushing = driver.flushing { pending.append(flushing) }
        func settle() {
            while let flush = pending.first {
                pending.removeFirst()
                now += 0.001
                pending += Self.flushes(driver.flushed(batch: flush.batch, through: Self.position(driver), now: now))
            }
        }
        settle()
        #expect(!driver.compactionDue)
        for command in ["x", "y", "z"] {
            let (_, proposed) = driver.propose([command], now: now)
            pending += Self.flushes(proposed)
            settle()
        }
        #expect(driver.compactionDue)
        let compaction = driver.compactIfDue { "snapshot" }
        #expect(!compaction.isEmpty)
        #expect(driver.replica.snapshotPosition.index == driver.replica.appliedIndex)
        #expect(!driver.compactionDue)
    }
}
