/// One shard of a bike job's stations, as a value: the counts of the stations it owns
/// (station `i` belongs to shard `i % shardCount`) and, for each user that moved here,
/// its last move here. A sharded job's stations are spread over several nodes, one
/// shard per node, so no one node answers every move; each shard keeps its changes in
/// its own Raft group (`bikeshard-JOB-K`).
///
/// Every change is one ``Event`` with its sequence number and outcome, so a replica that
/// applies a shard's committed events (in the order ``ShardCommitOrder`` allows) reaches
/// the shard's committed state.
///
/// **Why a shard may answer a move before it commits it.** A user's moves go to
/// different shards, so no single log orders all of a job's changes. Each move instead
/// names the user's previous move (``Position``: shard, epoch, sequence number), and a
/// shard commits a move only once the move it names is committed
/// (``ShardCommitOrder``). So the committed state of every shard together is a
/// consistent cut: no committed move follows a move that was lost. When a shard's host
/// dies, its uncommitted moves are lost, every other shard's moves that depend on them
/// are uncommitted too, and the job restarts its users from the cut under a new epoch
/// (see ARCHITECTURE.md, "Sharded stations").
public struct StationShardBook: Sendable, Hashable, Codable {
    /// Where a move was made: the `seq`-th event of shard `shard`, made in `epoch`.
    public struct Position: Sendable, Hashable, Codable, CustomStringConvertible {
        public var shard: Int
        public var epoch: Int
        public var seq: Int

        public init(shard: Int, epoch: Int, seq: Int) {
            self.shard = shard
            self.epoch = epoch
            self.seq = seq
        }

        public var description: String { "shard \(shard) event \(seq) (epoch \(epoch))" }
    }

    /// A user's last move at this shard.
    public struct Mark: Sendable, Hashable, Codable {
        /// The newest attempt that moved here (the shard's ledger fences older ones too).
        public var attempt = 0
        public var step = 0
        /// The outcome of that step, for an idempotent repeat.
        public var outcome = false
        /// The user's progress after that step.
        public var progress = UserProgress()
        /// The step's event here.
        public var seq = 0

        public init() {}
    }

    /// One take or leave at one of the shard's stations.
    public struct ShardMove: Sendable, Hashable, Codable {
        public var move: Move
        /// A station's index in the network (one this shard owns).
        public var station: Int
        public var take: Bool
        /// The user's progress before this move, as its worker holds it.
        public var before: UserProgress
        /// The user's previous move, which must be committed before this one (nil when
        /// there is none, or it was committed when this attempt began).
        public var after: Position?

        public init(move: Move, station: Int, take: Bool, before: UserProgress, after: Position?) {
            self.move = move
            self.station = station
            self.take = take
            self.before = before
            self.after = after
        }
    }

    /// One change of the shard.
    public enum Event: Sendable, Hashable, Codable {
        case move(ShardMove)
    }

    public let shard: Int
    public let shardCount: Int
    /// The goal station's index in the network, if the job has one.
    public let goalIndex: Int?
    /// The counts of the stations this shard owns, by network index.
    public private(set) var stations: [Int: Station]
    /// Each user's last move here, by user.
    public private(set) var marks: [Int: Mark]
    /// The highest sequence number applied (on a host, every event up to it was made
    /// here; a replica may lack some below it that are not committed yet).
    public private(set) var applied: Int

    /// Shard `shard` of `shardCount` over `network` (the job's stations in network order).
    public init(shard: Int, shardCount: Int, network: [Station], goalIndex: Int?) {
        self.shard = shard
        self.shardCount = shardCount
        self.goalIndex = goalIndex
        stations = Dictionary(uniqueKeysWithValues: network.indices.filter { $0 % max(1, shardCount) == shard }.map { ($0, network[$0]) })
        marks = [:]
        applied = 0
    }

    /// The shard that owns station `index` in a job of `shardCount` shards.
    public static func shard(ofStation index: Int, shardCount: Int) -> Int { index % max(1, shardCount) }

    /// Applies `shardMove` unless it is stale (an attempt older than the user's last here,
    /// or a step at or before its last here), then returns its outcome and the event's
    /// position; a repeat of the user's last step here returns the recorded outcome and
    /// applies nothing (`applied` false). A take by a rider or a leave by a user on foot
    /// is refused, so no replayed move can make or lose a bike.
    ///
    /// A host's event is numbered next and its outcome is the station's answer (`seq` and
    /// `recorded` nil). A replica replays it under the number and with the outcome its host
    /// gave it (``ShardCommitOrder`` keeps the station in range); one at or below its
    /// user's last number here was applied before (a batch proposed again): it applies
    /// nothing.
    public mutating func apply(_ shardMove: ShardMove, seq given: Int? = nil, outcome recorded: Bool? = nil) throws(BikeJobBook.Refusal) -> (outcome: Bool, seq: Int, applied: Bool) {
        let move = shardMove.move
        guard var counts = stations[shardMove.station] else { throw .outOfOrder(user: move.user, step: move.step, expected: 0) }
        let mark = marks[move.user] ?? Mark()
        if let given, given <= mark.seq { return (mark.outcome, mark.seq, false) }
        guard move.attempt >= mark.attempt else {
            throw .staleAttempt(user: move.user, attempt: move.attempt, current: mark.attempt)
        }
        if mark.step > 0, move.step == mark.step { return (mark.outcome, mark.seq, false) }
        guard move.step > mark.step, shardMove.before.moves == move.step - 1 else {
            throw .outOfOrder(user: move.user, step: move.step, expected: max(mark.step + 1, shardMove.before.moves + 1))
        }
        guard shardMove.take != shardMove.before.hasBike else {
            throw .wrongOperation(user: move.user, step: move.step, riding: shardMove.before.hasBike)
        }
        let outcome: Bool
        if let recorded {
            if recorded, !(shardMove.take ? counts.takeBike() : counts.leaveBike()) {
                throw .noRoom(user: move.user, step: move.step, station: shardMove.station)
            }
            outcome = recorded
        } else {
            outcome = shardMove.take ? counts.takeBike() : counts.leaveBike()
        }
        stations[shardMove.station] = counts
        let seq = given ?? applied + 1
        applied = max(applied, seq)
        var progress = shardMove.before
        progress.record(succeeded: outcome, at: "\(shardMove.station)", goal: goalIndex.map(String.init))
        marks[move.user] = Mark(attempt: move.attempt, step: move.step, outcome: outcome, progress: progress, seq: seq)
        return (outcome, seq, true)
    }

    /// What applying a recorded event did.
    public enum Replay: Sendable, Equatable {
        case applied
        /// The event was applied before (a batch proposed again after a failed proposal
        /// that had committed after all): nothing changes.
        case repeated
        /// The event does not apply here (a replica fed a shard's events in their order
        /// never sees one).
        case refused
    }

    /// Applies event `seq`, which a shard recorded with `outcome`.
    @discardableResult
    public mutating func replay(_ event: Event, seq: Int, outcome: Bool) -> Replay {
        switch event {
        case .move(let shardMove):
            guard let result = try? apply(shardMove, seq: seq, outcome: outcome) else { return .refused }
            return result.applied ? .applied : .repeated
        }
    }

}

extension StationShardBook.Mark {
    init(attempt: Int, step: Int, outcome: Bool, progress: UserProgress, seq: Int) {
        self.attempt = attempt
        self.step = step
        self.outcome = outcome
        self.progress = progress
        self.seq = seq
    }
}
