import Synchronization

/// The live state of one shard of a sharded bike job on the node that hosts it: a
/// ``StationShardBook`` behind one lock, the events it made that are not committed yet
/// (each with the move it depends on), and which of its events are committed.
///
/// - Moves are applied once per (user, attempt, step) (``StationShardBook/apply(_:seq:outcome:)``).
/// - ``fence(user:attempt:)`` refuses every older attempt of a user from then on and
///   says where the user's last move here left it, so a retried user resumes from its
///   furthest move on any shard.
/// - ``close()`` ends the shard's moves (its job ended, or its epoch did).
/// - ``awaitCommitted(_:)`` answers another shard whose move follows one of these: it
///   learns every event committed here, so it can commit all that follow them.
///
/// Its committer (``BikeShards``) hands the events on with ``takeCommittable(limit:known:)``
/// as ``ShardCommitOrder`` allows: not always in the order they were made.
public final class StationShardLedger: Sendable {
    /// Why the shard will commit nothing more: its job ended, or its run here stopped.
    public enum Stop: Sendable, Equatable {
        case none
        case closed
        /// A commit failed (another host runs the shard now): waiters hear false.
        case failed
    }

    private struct Waiter {
        var seq: Int
        /// Waits for every event up to `seq`, not only `seq`.
        var all: Bool
        var continuation: CheckedContinuation<ShardCommits?, Never>

        func isMet(by commits: ShardCommits) -> Bool { all ? commits.through >= seq : commits.contains(seq) }
    }

    private struct State {
        var book: StationShardBook
        var pending: [(event: StationShardBook.Event, outcome: Bool, order: ShardCommitOrder.Pending)] = []
        var committed: ShardCommits
        /// The stations' counts as the committed events left them.
        var committedStations: [Int: Station]
        var fences: [Int: Int] = [:]
        var stop = Stop.none
        var waiters: [Waiter] = []
        /// What its committer is doing, for a log line when the shard is slow.
        var activity = "starting"
    }

    public let epoch: Int
    private let state: Mutex<State>
    private let doorbell: AsyncStream<Void>.Continuation
    /// Rings when there are new events to commit, or the ledger closed.
    public let newEvents: AsyncStream<Void>

    /// A ledger in `epoch` from `book`, the shard's committed state.
    public init(book: StationShardBook, epoch: Int) {
        self.epoch = epoch
        state = Mutex(State(book: book, committed: ShardCommits(through: book.applied), committedStations: book.stations))
        (newEvents, doorbell) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    public var shard: Int { state.withLock { $0.book.shard } }

    /// Applies `shardMove`; returns its outcome and where it was made.
    public func move(_ shardMove: StationShardBook.ShardMove) throws(BikeJobBook.Refusal) -> (outcome: Bool, position: StationShardBook.Position) {
        let epoch = epoch
        let (outcome, seq, applied) = try state.withLock { (state) throws(BikeJobBook.Refusal) -> (Bool, Int, Bool) in
            let move = shardMove.move
            guard state.stop == .none else { throw .jobEnded(user: move.user) }
            let fence = state.fences[move.user] ?? 0
            guard move.attempt >= fence else { throw .staleAttempt(user: move.user, attempt: move.attempt, current: fence) }
            let result = try state.book.apply(shardMove)
            if result.applied {
                let delta = result.outcome ? (shardMove.take ? -1 : 1) : 0
                state.pending.append((.move(shardMove), result.outcome, ShardCommitOrder.Pending(seq: result.seq, station: shardMove.station, delta: delta, after: shardMove.after)))
            }
            return result
        }
        if applied { doorbell.yield() }
        return (outcome, StationShardBook.Position(shard: shard, epoch: epoch, seq: seq))
    }

    /// Refuses `user`'s attempts older than `attempt` from now on; returns its last move
    /// here and where it was made (nil when it has made none here).
    public func fence(user: Int, attempt: Int) -> (mark: StationShardBook.Mark, position: StationShardBook.Position)? {
        state.withLock { state in
            state.fences[user] = max(state.fences[user] ?? 0, attempt)
            return state.book.marks[user].map { ($0, StationShardBook.Position(shard: state.book.shard, epoch: epoch, seq: $0.seq)) }
        }
    }

    /// Up to `limit` of the uncommitted events that may be committed now, in the order they
    /// were made, with their sequence numbers and outcomes, given `known` (what each other
    /// shard has committed), and the position the oldest event held back by another shard
    /// waits for. The events stay pending until ``committed(_:)``.
    public func takeCommittable(
        limit: Int, known: [Int: ShardCommits]
    ) -> (events: [StationShardBook.Event], seqs: [Int], outcomes: [Bool], waitsFor: StationShardBook.Position?) {
        state.withLock { state in
            let (indices, waitsFor) = ShardCommitOrder.committable(
                state.pending.map(\.order), shard: state.book.shard, epoch: epoch, stations: state.committedStations,
                own: state.committed, known: known, limit: limit)
            let taken = indices.map { state.pending[$0] }
            return (taken.map(\.event), taken.map(\.order.seq), taken.map(\.outcome), waitsFor)
        }
    }

    /// Events `seqs` are committed.
    public func committed(_ seqs: [Int]) {
        let (ready, commits): ([CheckedContinuation<ShardCommits?, Never>], ShardCommits) = state.withLock { state in
            let done = Set(seqs)
            for event in state.pending where done.contains(event.order.seq) && event.order.delta != 0 {
                guard var station = state.committedStations[event.order.station] else { continue }
                _ = event.order.delta < 0 ? station.takeBike() : station.leaveBike()
                state.committedStations[event.order.station] = station
            }
            state.pending.removeAll { done.contains($0.order.seq) }
            for seq in seqs { state.committed.insert(seq) }
            let commits = state.committed
            let ready = state.waiters.filter { $0.isMet(by: commits) }.map(\.continuation)
            state.waiters.removeAll { $0.isMet(by: commits) }
            return (ready, commits)
        }
        for continuation in ready { continuation.resume(returning: commits) }
    }

    /// The events committed so far (the shard's committed book has applied them).
    public var commits: ShardCommits { state.withLock { $0.committed } }
    /// Events made so far, committed or not.
    public var madeCount: Int { state.withLock { $0.book.applied } }
    /// Events made and not committed yet.
    public var pendingCount: Int { state.withLock { $0.pending.count } }
    /// Whether every event made is committed.
    public var isDrained: Bool { state.withLock { $0.pending.isEmpty } }

    /// Waits until event `seq` is committed and returns every event committed then (a
    /// waiting shard learns all it may commit after, not only `seq`); nil if the shard
    /// stops first.
    public func awaitCommitted(_ seq: Int) async -> ShardCommits? {
        await awaitCommits(through: seq, all: false)
    }

    private func awaitCommits(through seq: Int, all: Bool) async -> ShardCommits? {
        await withCheckedContinuation { continuation in
            let answer: ShardCommits?? = state.withLock { state in
                let waiter = Waiter(seq: seq, all: all, continuation: continuation)
                if waiter.isMet(by: state.committed) { return .some(state.committed) }
                if state.stop == .failed { return .some(nil) }
                state.waiters.append(waiter)
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    /// Waits until every event made so far is committed; false if the shard stops first.
    public func flush() async -> Bool {
        await awaitCommits(through: madeCount, all: true) != nil
    }

    /// No more moves: the events made so far are still committed.
    public func close() {
        state.withLock { if $0.stop == .none { $0.stop = .closed } }
        doorbell.yield()
    }

    /// A commit failed: no more moves or commits here; every waiter hears false.
    public func fail() {
        let waiting: [CheckedContinuation<ShardCommits?, Never>] = state.withLock { state in
            state.stop = .failed
            defer { state.waiters = [] }
            return state.waiters.map(\.continuation)
        }
        for continuation in waiting { continuation.resume(returning: nil) }
        doorbell.finish()
    }

    /// Notes what the shard's committer is doing now (``summary`` says it).
    public func note(_ activity: String) {
        state.withLock { $0.activity = activity }
    }

    /// The shard's counts and its committer's activity, as words for a log line.
    public var summary: String {
        state.withLock { state in
            let head = state.pending.first.map { "\($0.order.after.map(\.description) ?? "nothing")" } ?? "none"
            return "made \(state.book.applied), committed \(state.committed), \(state.pending.count) pending (the first follows \(head)), \(state.waiters.count) waiting, stop \(state.stop), committer \(state.activity)"
        }
    }

    /// Why the shard stopped, if it did.
    public var stop: Stop { state.withLock { $0.stop } }

    /// The shard's book now (its committed book once ``isDrained``).
    public var book: StationShardBook { state.withLock { $0.book } }

    /// Ends the stream of new events (the committer ends once it is drained).
    public func finishRecording() { doorbell.finish() }
}
