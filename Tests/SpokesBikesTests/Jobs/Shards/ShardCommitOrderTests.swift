import Testing
@testable import SpokesBikes

/// The sharded job's safety rule (``ShardCommitOrder``) against a model: users move over
/// the stations of three shards, each shard commits its events in the order it made
/// them, and the hosts crash at random, losing every uncommitted event, after which the
/// job restarts from the shards' committed states. Bikes must be conserved in every
/// committed cut; committing without the rule must break that.
@Suite struct ShardCommitOrderTests {
    /// One seeded run; returns the first broken promise, or nil.
    static func play(seed: UInt64, followRule: Bool, steps: Int = 600) -> String? {
        var random = SeededGenerator(seed: seed)
        let shardCount = 3
        let network = (0..<7).map { Station(id: "\($0)", name: "S\($0)", freeBikes: 2, emptySlots: 2) }
        let bikes = network.reduce(0) { $0 + $1.freeBikes }
        let userCount = 8
        struct Shard {
            var live: StationShardBook
            var committedBook: StationShardBook
            var pending: [(StationShardBook.Event, StationShardBook.Position?)] = []
        }
        var shards = (0..<shardCount).map {
            let book = StationShardBook(shard: $0, shardCount: shardCount, network: network, goalIndex: nil)
            return Shard(live: book, committedBook: book)
        }
        var progress = Array(repeating: UserProgress(), count: userCount)
        var last = [StationShardBook.Position?](repeating: nil, count: userCount)
        var attempt = 1
        var epoch = 0

        func committedCut() -> BikeJobBook {
            var book = BikeJobBook(users: userCount, stations: network)
            for shard in shards { book.adopt(shard.committedBook) }
            return book
        }

        for step in 0..<steps {
            let roll = Int.random(in: 0..<100, using: &random)
            if roll < 60 {
                let user = Int.random(in: 0..<userCount, using: &random)
                let station = Int.random(in: 0..<network.count, using: &random)
                let index = StationShardBook.shard(ofStation: station, shardCount: shardCount)
                let shardMove = StationShardBook.ShardMove(
                    move: Move(user: user, attempt: attempt, step: progress[user].moves + 1), station: station,
                    take: !progress[user].hasBike, before: progress[user], after: last[user])
                guard let (outcome, seq, applied) = try? shards[index].live.apply(shardMove) else { return "step \(step): a fresh move was refused" }
                guard applied else { return "step \(step): a fresh move was taken for a repeat" }
                shards[index].pending.append((.move(shardMove), shardMove.after))
                progress[user].record(succeeded: outcome, at: "\(station)", goal: nil)
                last[user] = .init(shard: index, epoch: epoch, seq: seq)
            } else if roll < 95 {
                let index = Int.random(in: 0..<shardCount, using: &random)
                let known = Dictionary(uniqueKeysWithValues: shards.map { ($0.committedBook.shard, $0.committedBook.applied) })
                let allowed = followRule
                    ? ShardCommitOrder.committable(shards[index].pending.map(\.1), shard: index, epoch: epoch, committed: known).count
                    : shards[index].pending.count
                guard allowed > 0 else { continue }
                let count = Int.random(in: 1...allowed, using: &random)
                for (event, _) in shards[index].pending.prefix(count) where shards[index].committedBook.replay(event) != .applied {
                    return "step \(step): a replica refused an event its shard made"
                }
                shards[index].pending.removeFirst(count)
            } else {
                // Every host crashes: each shard keeps what it committed, and the job restarts
                // its users from the cut under a new epoch.
                let cut = committedCut()
                guard cut.bikesInPlay == bikes else {
                    return "step \(step): the committed cut has \(cut.bikesInPlay) bikes in play, not \(bikes)"
                }
                for index in shards.indices {
                    shards[index].live = shards[index].committedBook
                    shards[index].pending = []
                }
                progress = cut.entries.map(\.progress)
                last = Array(repeating: nil, count: userCount)
                attempt += 1
                epoch += 1
            }
        }
        let cut = committedCut()
        return cut.bikesInPlay == bikes ? nil : "at the end the committed cut has \(cut.bikesInPlay) bikes in play, not \(bikes)"
    }

    @Test func everyCommittedCutConservesBikesWhenShardsCommitAfterWhatTheirMovesFollow() {
        for seed in UInt64(1)...300 {
            let broken = Self.play(seed: seed, followRule: true)
            #expect(broken == nil, "seed \(seed): \(broken ?? "")")
        }
    }

    @Test func committingWithoutWaitingForTheMoveBeforeLosesOrMakesBikes() {
        let broken = (UInt64(1)...300).compactMap { Self.play(seed: $0, followRule: false) }
        #expect(!broken.isEmpty, "the model must catch shards that commit out of causal order")
    }

    @Test func aShardCommitsThePrefixWhoseDependenciesAreCommitted() {
        let at = { (shard: Int, seq: Int) in StationShardBook.Position(shard: shard, epoch: 0, seq: seq) }
        let pending: [StationShardBook.Position?] = [nil, at(1, 4), at(0, 2), at(2, 9), nil]
        #expect(ShardCommitOrder.committable(pending, shard: 0, epoch: 0, committed: [1: 3]) == (1, at(1, 4)))
        #expect(ShardCommitOrder.committable(pending, shard: 0, epoch: 0, committed: [1: 4, 2: 8]) == (3, at(2, 9)))
        #expect(ShardCommitOrder.committable(pending, shard: 0, epoch: 0, committed: [1: 4, 2: 9]).count == 5)
        let older = StationShardBook.Position(shard: 1, epoch: 0, seq: 1)
        #expect(ShardCommitOrder.committable([older], shard: 0, epoch: 1, committed: [1: 50]).count == 0, "a move of an older epoch was lost")
    }

    @Test func aShardRefusesStaleRepeatedAndImpossibleMoves() throws {
        let network = [Station(id: "0", name: "A", freeBikes: 1, emptySlots: 1), Station(id: "1", name: "B", freeBikes: 1, emptySlots: 1)]
        var book = StationShardBook(shard: 0, shardCount: 2, network: network, goalIndex: nil)
        #expect(book.stations.keys.sorted() == [0], "station 1 is shard 1's")
        let take = StationShardBook.ShardMove(move: Move(user: 0, attempt: 2, step: 1), station: 0, take: true, before: UserProgress(), after: nil)
        #expect(try book.apply(take) == (true, 1, true))
        #expect(try book.apply(take) == (true, 1, false), "a repeat answers the same and applies nothing")
        #expect(book.stations[0]?.freeBikes == 0)
        var riding = UserProgress()
        riding.record(succeeded: true, at: "0", goal: nil)
        let stale = StationShardBook.ShardMove(move: Move(user: 0, attempt: 1, step: 2), station: 0, take: false, before: riding, after: nil)
        #expect(throws: BikeJobBook.Refusal.staleAttempt(user: 0, attempt: 1, current: 2)) { try book.apply(stale) }
        let takeWhileRiding = StationShardBook.ShardMove(move: Move(user: 0, attempt: 2, step: 2), station: 0, take: true, before: riding, after: nil)
        #expect(throws: BikeJobBook.Refusal.wrongOperation(user: 0, step: 2, riding: true)) { try book.apply(takeWhileRiding) }
        let elsewhere = StationShardBook.ShardMove(move: Move(user: 1, attempt: 1, step: 1), station: 1, take: true, before: UserProgress(), after: nil)
        #expect(throws: BikeJobBook.Refusal.self) { try book.apply(elsewhere) }
        #expect(book.applied == 1)
    }
}
