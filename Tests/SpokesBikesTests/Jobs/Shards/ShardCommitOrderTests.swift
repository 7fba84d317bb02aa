import Testing
@testable import SpokesBikes

/// The sharded job's safety rule (``ShardCommitOrder``) against a model: users move over
/// the stations of three shards, each shard commits some of the events the rule allows,
/// and the hosts crash at random, losing every uncommitted event, after which the job
/// restarts from the shards' committed states. Bikes must be conserved in every committed
/// cut, and no replica may find a station without room for an event its host made;
/// committing without either half of the rule (the user's previous move, the station's
/// room) must break that.
@Suite struct ShardCommitOrderTests {
    /// One seeded run; returns the first broken promise, or nil.
    enum Rule { case follow, ignoreUsers, ignoreRoom }

    static func play(seed: UInt64, rule: Rule, steps: Int = 600) -> String? {
        var random = SeededGenerator(seed: seed)
        let shardCount = 3
        let network = (0..<7).map { Station(id: "\($0)", name: "S\($0)", freeBikes: 2, emptySlots: 2) }
        let bikes = network.reduce(0) { $0 + $1.freeBikes }
        let userCount = 8
        struct Shard {
            var live: StationShardBook
            var committedBook: StationShardBook
            var commits = ShardCommits()
            var pending: [(event: StationShardBook.Event, order: ShardCommitOrder.Pending, outcome: Bool)] = []
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
                let delta = outcome ? (shardMove.take ? -1 : 1) : 0
                shards[index].pending.append((.move(shardMove), .init(seq: seq, station: station, delta: delta, after: shardMove.after), outcome))
                progress[user].record(succeeded: outcome, at: "\(station)", goal: nil)
                last[user] = .init(shard: index, epoch: epoch, seq: seq)
            } else if roll < 95 {
                let index = Int.random(in: 0..<shardCount, using: &random)
                let known = Dictionary(uniqueKeysWithValues: shards.map { ($0.committedBook.shard, $0.commits) })
                let pending = shards[index].pending
                let stations = shards[index].committedBook.stations
                var allowed: [Int]
                switch rule {
                case .follow:
                    allowed = ShardCommitOrder.committable(
                        pending.map(\.order), shard: index, epoch: epoch, stations: stations, own: shards[index].commits, known: known).indices
                case .ignoreUsers:
                    let everything = Dictionary(uniqueKeysWithValues: (0..<shardCount).map { ($0, ShardCommits.everything) })
                    allowed = ShardCommitOrder.committable(pending.map(\.order), shard: index, epoch: epoch, stations: stations, own: .everything, known: everything).indices
                case .ignoreRoom:
                    // The user half alone: each user's moves in order, whatever room their stations have.
                    let roomy = stations.mapValues { _ in Station(id: "", name: "", freeBikes: 1_000, emptySlots: 1_000) }
                    allowed = ShardCommitOrder.committable(pending.map(\.order), shard: index, epoch: epoch, stations: roomy, own: shards[index].commits, known: known).indices
                }
                guard !allowed.isEmpty else { continue }
                // What the rule allows, a prefix of it is too.
                allowed = Array(allowed.prefix(Int.random(in: 1...allowed.count, using: &random)))
                for position in allowed {
                    let (event, order, outcome) = pending[position]
                    guard shards[index].committedBook.replay(event, seq: order.seq, outcome: outcome) == .applied else {
                        return "step \(step): a replica refused an event its shard made (a station without room for it)"
                    }
                    shards[index].commits.insert(order.seq)
                }
                let done = Set(allowed)
                shards[index].pending = pending.indices.filter { !done.contains($0) }.map { pending[$0] }
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
                    shards[index].commits = ShardCommits(through: shards[index].committedBook.applied)
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
            let broken = Self.play(seed: seed, rule: .follow)
            #expect(broken == nil, "seed \(seed): \(broken ?? "")")
        }
    }

    @Test func committingWithoutWaitingForTheMoveBeforeLosesOrMakesBikes() {
        let broken = (UInt64(1)...300).compactMap { Self.play(seed: $0, rule: .ignoreUsers) }
        #expect(!broken.isEmpty, "the model must catch shards that commit out of causal order")
    }

    @Test func committingWithoutRoomAtTheStationLeavesItOutOfRange() {
        let broken = (UInt64(1)...300).compactMap { Self.play(seed: $0, rule: .ignoreRoom) }
        #expect(!broken.isEmpty, "the model must catch shards that commit a move its station has no room for")
    }

    @Test func aShardCommitsEveryEventWhoseUserAndStationAreReady() {
        let at = { (shard: Int, seq: Int) in StationShardBook.Position(shard: shard, epoch: 0, seq: seq) }
        let stations = [0: Station(id: "0", name: "A", freeBikes: 1, emptySlots: 1), 2: Station(id: "2", name: "B", freeBikes: 0, emptySlots: 2)]
        let pending: [ShardCommitOrder.Pending] = [
            .init(seq: 1, station: 0, delta: -1, after: nil),
            .init(seq: 2, station: 2, delta: 1, after: at(1, 4)),
            .init(seq: 3, station: 0, delta: 1, after: at(0, 1)),
            .init(seq: 4, station: 2, delta: -1, after: nil),
            .init(seq: 5, station: 2, delta: 0, after: at(0, 2)),
            .init(seq: 6, station: 0, delta: -1, after: at(2, 9)),
        ]
        let none = ShardCommits()
        #expect(ShardCommitOrder.committable(pending, shard: 0, epoch: 0, stations: stations, own: none, known: [1: ShardCommits(through: 3)])
                == ([0, 2], at(1, 4)),
                "event 2 waits for shard 1; event 4 takes the bike event 2 leaves, 5 follows event 2; 6 waits for shard 2")
        #expect(ShardCommitOrder.committable(pending, shard: 0, epoch: 0, stations: stations, own: none,
                                             known: [1: ShardCommits(through: 4), 2: ShardCommits(through: 9)]).indices == [0, 1, 2, 3, 4, 5])
        #expect(ShardCommitOrder.committable(pending, shard: 0, epoch: 0, stations: stations, own: none, known: [1: ShardCommits(through: 4)], limit: 2).indices
                == [0, 1], "at most the limit")
        let older = ShardCommitOrder.Pending(seq: 1, station: 0, delta: -1, after: StationShardBook.Position(shard: 1, epoch: 0, seq: 1))
        #expect(ShardCommitOrder.committable([older], shard: 0, epoch: 1, stations: stations, own: none, known: [1: ShardCommits(through: 50)]).indices.isEmpty,
                "a move of an older epoch was lost")
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
