import Distributed
import SpokesCluster
import Synchronization

/// One shard of a sharded bike job's stations, hosted as a distributed actor by the node
/// the job's coordinator chose for it: user tasks on any node take and leave bikes
/// there, the coordinator fences retried users and waits for commits, and the other
/// shards wait for the moves their own moves follow. Everything goes through its
/// ``StationShardLedger``.
public distributed actor JobStationShard {
    public typealias ActorSystem = ClusterSystem

    private let ledger: StationShardLedger

    /// The well-known name of shard `shard` of `job` in `epoch`. A worker or shard of an
    /// older epoch finds no shard under the new names.
    public static func name(job: String, epoch: Int, shard: Int) -> String {
        "\(job).e\(epoch).shard.\(shard)"
    }

    public init(actorSystem: ClusterSystem, ledger: StationShardLedger) {
        self.actorSystem = actorSystem
        self.ledger = ledger
    }

    /// Shard `shard` of `job` in `epoch`, hosted by `host`.
    public static func at(_ host: NodeID, job: String, epoch: Int, shard: Int, using system: ClusterSystem) throws -> JobStationShard {
        try resolve(id: ActorID(node: host, name: name(job: job, epoch: epoch, shard: shard)), using: system)
    }

    /// What a move answers: whether it succeeded, and where it was made (the user's next
    /// move names it, so it commits after this one).
    public struct Answer: Sendable, Codable {
        public var outcome: Bool
        public var position: StationShardBook.Position
    }

    public distributed func move(_ shardMove: StationShardBook.ShardMove) throws -> Answer {
        let (outcome, position) = try ledger.move(shardMove)
        return Answer(outcome: outcome, position: position)
    }

    /// A user's last move at a shard, and where it was made.
    public struct LastMove: Sendable, Codable {
        public var mark: StationShardBook.Mark
        public var position: StationShardBook.Position
    }

    /// Fences off `user`'s attempts older than `attempt`; returns its last move here.
    public distributed func fence(user: Int, attempt: Int) -> LastMove? {
        ledger.fence(user: user, attempt: attempt).map { LastMove(mark: $0.mark, position: $0.position) }
    }

    /// Waits until this shard's event `seq` is committed; returns every event committed
    /// then, or nil if the shard stopped first.
    public distributed func awaitCommitted(_ seq: Int) async -> ShardCommits? {
        await ledger.awaitCommitted(seq)
    }

    /// Every event committed here now, at once (a shard with moves of its own to commit
    /// learns what this one committed meanwhile).
    public distributed func commits() -> ShardCommits {
        ledger.commits
    }

    /// Waits until every move made here so far is committed (false if the shard stopped).
    public distributed func flush() async -> Bool {
        await ledger.flush()
    }

    /// Ends the shard's moves, waits until every one is committed and returns the
    /// shard's committed book (nil if a commit failed).
    public distributed func finish() async -> StationShardBook? {
        ledger.close()
        guard await ledger.flush() else { return nil }
        return ledger.book
    }

    /// The shard's counts and what its committer is doing, as words (for a log line).
    public distributed func summary() -> String {
        ledger.summary
    }

    /// The shard's stations now, by network index.
    public distributed func stations() -> [Int: Station] {
        ledger.book.stations
    }
}

/// A worker's handle on a station of a sharded job, as the ``BikeDock`` the shared ride
/// rules drive. The user's docks share one ``Trail``: its progress (each move carries
/// it) and its last move's position (each move names it, so the shards commit the
/// user's moves in order).
struct RemoteShardDock: BikeDock {
    typealias Failure = any Error

    /// One user's progress and last move, shared by its docks (a user makes one move at a time).
    final class Trail: Sendable {
        private struct State {
            var progress: UserProgress
            var last: StationShardBook.Position?
        }

        private let state: Mutex<State>
        let goal: String?

        init(progress: UserProgress, last: StationShardBook.Position?, goal: String?) {
            state = Mutex(State(progress: progress, last: last))
            self.goal = goal
        }

        var current: (progress: UserProgress, last: StationShardBook.Position?) { state.withLock { ($0.progress, $0.last) } }

        func record(_ answer: JobStationShard.Answer, station: String) {
            state.withLock { state in
                state.progress.record(succeeded: answer.outcome, at: station, goal: goal)
                state.last = answer.position
            }
        }
    }

    let stationID: String
    let index: Int
    let shard: JobStationShard
    let trail: Trail

    func takeBike(_ move: Move) async throws -> Bool { try await perform(move, take: true) }
    func leaveBike(_ move: Move) async throws -> Bool { try await perform(move, take: false) }

    private func perform(_ move: Move, take: Bool) async throws -> Bool {
        let (before, after) = trail.current
        let answer = try await shard.move(StationShardBook.ShardMove(move: move, station: index, take: take, before: before, after: after))
        trail.record(answer, station: stationID)
        return answer.outcome
    }
}
