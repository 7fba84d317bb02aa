import SpokesCluster
import SpokesReplication
import Testing
@testable import SpokesBikes

/// A sharded job's shard: its ledger on the host, its Raft machine on the replicas, and
/// where the coordinator hosts the shards.
@Suite struct StationShardTests {
    static let network = (0..<6).map { Station(id: "\($0)", name: "S\($0)", freeBikes: 2, emptySlots: 2) }

    static func take(user: Int, attempt: Int = 1, step: Int = 1, station: Int, after: StationShardBook.Position? = nil) -> StationShardBook.ShardMove {
        StationShardBook.ShardMove(move: Move(user: user, attempt: attempt, step: step), station: station, take: true, before: UserProgress(), after: after)
    }

    @Test func theMachineAppliesOnlyTheCurrentEpochsBatchesAndKeepsItsBook() throws {
        let start = StationShardBook(shard: 1, shardCount: 2, network: Self.network, goalIndex: nil)
        var machine = StationShardMachine()
        #expect(machine.apply(StationShardMachine.record([.move(Self.take(user: 0, station: 1))], seqs: [1], outcomes: [true], epoch: 0)).hasPrefix("error:"), "no events before the book")
        #expect(machine.apply(StationShardMachine.start(start)) == "ok")
        #expect(machine.apply(StationShardMachine.record([.move(Self.take(user: 0, station: 1))], seqs: [1], outcomes: [true], epoch: 0)) == "ok")
        #expect(machine.book?.stations[1]?.freeBikes == 1)
        #expect(machine.apply(StationShardMachine.takeOver(epoch: 1)) == "ok")
        let before = machine.book
        #expect(machine.apply(StationShardMachine.record([.move(Self.take(user: 1, station: 3))], seqs: [2], outcomes: [true], epoch: 0)).hasPrefix("error:"), "a replaced host's late batch")
        #expect(machine.book == before, "changed nothing")
        #expect(machine.apply(StationShardMachine.takeOver(epoch: 1)).hasPrefix("error:"), "an epoch not above the current one")
        #expect(machine.apply(StationShardMachine.record([.move(Self.take(user: 0, station: 0))], seqs: [2], outcomes: [true], epoch: 1)).hasPrefix("error:"), "station 0 is not this shard's")
        #expect(machine.apply(StationShardMachine.record([.move(Self.take(user: 1, station: 3))], seqs: [], outcomes: [], epoch: 1)).hasPrefix("error:"), "an event without its number")
        #expect(machine.refusedEvents == 1)
        #expect(machine.apply(StationShardMachine.finish) == "ok")
        var restored = StationShardMachine()
        try restored.restore(machine.snapshot())
        #expect(restored.book == machine.book && restored.finished && restored.epoch == 1)
        #expect(machine.apply(StationShardMachine.takeOver(epoch: 2)) == "ok")
        #expect(!machine.finished, "a job taken over after its shards ended goes on")
        #expect(machine.apply("{not json").hasPrefix("error:"))
    }

    /// Found in review: a batch whose first event was refused applied its second, a later
    /// move of the same user, so the user's committed moves were no longer a prefix.
    @Test func aBatchWithARefusedEventChangesNothing() {
        var machine = StationShardMachine()
        _ = machine.apply(StationShardMachine.start(StationShardBook(shard: 0, shardCount: 1, network: Self.network, goalIndex: nil)))
        let before = machine.book
        var riding = UserProgress()
        riding.record(succeeded: true, at: "2", goal: nil)
        let leave = StationShardBook.ShardMove(move: Move(user: 0, attempt: 1, step: 2), station: 3, take: false, before: riding, after: nil)
        let batch = StationShardMachine.record([.move(Self.take(user: 0, station: 2)), .move(leave)], seqs: [1, 2], outcomes: [true, false], epoch: 0)
        let broken = StationShardMachine.record([.move(Self.take(user: 0, station: 9)), .move(leave)], seqs: [1, 2], outcomes: [true, false], epoch: 0)
        #expect(machine.apply(broken).hasPrefix("error:"), "station 9 is no station of this shard")
        #expect(machine.book == before && machine.refusedEvents == 1, "and the leave after it did not apply either")
        #expect(machine.apply(batch) == "ok")
    }

    @Test func aBatchProposedTwiceChangesTheShardOnce() {
        var machine = StationShardMachine()
        _ = machine.apply(StationShardMachine.start(StationShardBook(shard: 0, shardCount: 1, network: Self.network, goalIndex: nil)))
        let batch = StationShardMachine.record([.move(Self.take(user: 0, station: 2)), .move(Self.take(user: 1, station: 2))], seqs: [1, 2], outcomes: [true, true], epoch: 0)
        #expect(machine.apply(batch) == "ok")
        let once = machine.book
        #expect(machine.apply(batch) == "ok", "its first proposal had committed after all")
        #expect(machine.book == once && machine.refusedEvents == 0)
        #expect(machine.book?.stations[2]?.freeBikes == 0)
    }

    @Test func theLedgerHandsOnEveryEventWhoseUserAndStationAreReadyNotOnlyAPrefix() async {
        var network = Self.network
        network[2] = Station(id: "2", name: "S2", freeBikes: 2, emptySlots: 0)
        let ledger = StationShardLedger(book: StationShardBook(shard: 0, shardCount: 2, network: network, goalIndex: nil), epoch: 0)
        let first = try? ledger.move(Self.take(user: 0, station: 0))
        #expect(first?.position == .init(shard: 0, epoch: 0, seq: 1))
        let elsewhere = StationShardBook.Position(shard: 1, epoch: 0, seq: 7)
        _ = try? ledger.move(Self.take(user: 1, station: 2, after: elsewhere))
        _ = try? ledger.move(Self.take(user: 2, station: 4))
        var riding = UserProgress()
        riding.record(succeeded: true, at: "1", goal: nil)
        let leave = StationShardBook.ShardMove(move: Move(user: 3, attempt: 1, step: 2), station: 2, take: false, before: riding, after: nil)
        #expect((try? ledger.move(leave))?.outcome == true, "user 1's take made room at the full station")
        _ = try? ledger.move(Self.take(user: 4, station: 2))
        var known = [1: ShardCommits(through: 6)]
        let (events, seqs, outcomes, waitsFor) = ledger.takeCommittable(limit: 10, known: known)
        #expect(events.count == 3 && seqs == [1, 3, 5] && outcomes == [true, true, true] && waitsFor == elsewhere,
                "user 1's take waits for shard 1's event 7; user 3's leave waits for it (no room at station 2 without it); user 4's take need not")
        #expect(ledger.takeCommittable(limit: 1, known: known).seqs == [1], "at most the limit")
        known[1]?.insert(7)
        #expect(ledger.takeCommittable(limit: 10, known: known).seqs == [1, 2, 3, 4, 5])
        let waiting = Task { await ledger.awaitCommitted(3) }
        let flushed = Task { await ledger.flush() }
        ledger.committed([1, 3])
        #expect(ledger.commits == {
            var commits = ShardCommits(through: 1)
            commits.insert(3)
            return commits
        }() && !ledger.isDrained)
        #expect(await waiting.value?.contains(3) == true, "event 3 is committed, though event 2 is not")
        ledger.committed([5])
        #expect(ledger.takeCommittable(limit: 10, known: known).seqs == [2, 4], "station 2's committed count counts user 4's take")
        ledger.committed([2, 4])
        #expect(await flushed.value, "a flush waits for every event made")
        #expect(ledger.isDrained && ledger.commits == ShardCommits(through: 5))
        let never = Task { await ledger.awaitCommitted(9) }
        ledger.fail()
        #expect(await never.value == nil, "a shard that stopped answers nil")
        #expect(throws: BikeJobBook.Refusal.jobEnded(user: 3)) { try ledger.move(Self.take(user: 3, station: 0)) }
    }

    @Test func committedEventsFoldIntoARunFromTheFirst() {
        var commits = ShardCommits(through: 2)
        commits.insert(5)
        commits.insert(4)
        #expect(!commits.contains(3) && commits.contains(4) && commits.above == [4, 5])
        commits.insert(3)
        #expect(commits == ShardCommits(through: 5), "the run from 1 is folded in")
        var known = ShardCommits()
        known.formUnion(commits)
        var later = ShardCommits(through: 7)
        later.insert(9)
        known.formUnion(later)
        #expect(known.through == 7 && known.above == [9] && !known.contains(8))
    }

    @Test func aFenceRefusesOlderAttemptsAndSaysWhereTheUserGot() throws {
        let ledger = StationShardLedger(book: StationShardBook(shard: 0, shardCount: 1, network: Self.network, goalIndex: nil), epoch: 2)
        #expect(ledger.fence(user: 0, attempt: 1) == nil, "no move here yet")
        _ = try ledger.move(Self.take(user: 0, attempt: 1, station: 3))
        let last = ledger.fence(user: 0, attempt: 2)
        #expect(last?.mark.step == 1 && last?.mark.progress.hasBike == true && last?.position == .init(shard: 0, epoch: 2, seq: 1))
        var riding = UserProgress()
        riding.record(succeeded: true, at: "3", goal: nil)
        let late = StationShardBook.ShardMove(move: Move(user: 0, attempt: 1, step: 2), station: 3, take: false, before: riding, after: nil)
        #expect(throws: BikeJobBook.Refusal.staleAttempt(user: 0, attempt: 1, current: 2)) { try ledger.move(late) }
        #expect(ledger.madeCount == 1)
    }

    @Test func shardsKeepTheirHostsAndALostHostsShardGoesToTheLeastLoadedReplica() throws {
        let nodes = (0..<4).map { NodeID(name: "n\($0)", incarnation: 1) }
        let layout = [["n0", "n1", "n2"], ["n1", "n2", "n3"], ["n2", "n3", "n0"]]
        #expect(try ReplicatedBikeJobs.hosts(for: layout, alive: nodes, job: "j").map(\.name) == ["n0", "n1", "n2"])
        let withoutN1 = nodes.filter { $0.name != "n1" }
        #expect(try ReplicatedBikeJobs.hosts(for: layout, alive: withoutN1, job: "j").map(\.name) == ["n0", "n3", "n2"])
        let onlyN0 = [nodes[0]]
        #expect(throws: JobGroups.ReplicationFailure.self) { try ReplicatedBikeJobs.hosts(for: layout, alive: onlyN0, job: "j") }
    }
}
