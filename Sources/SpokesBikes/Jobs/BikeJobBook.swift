/// A bike job's whole changing state, as a value: its stations' counts and, for every
/// user, which attempt may act, how far it has got and how it ended. The coordinator's
/// ``JobLedger`` holds one behind a lock; a replicated job's `BikeJobMachine` holds one
/// on each replica and replays the coordinator's ``Event``s into it.
///
/// Every change is one ``Event`` and every event is deterministic (no clock, no
/// randomness), so a replica that applies the coordinator's events in the order the
/// coordinator made them reaches exactly the coordinator's state: the same bikes at the
/// same stations and the same progress for every user.
///
/// The exactly-once rules (see ``JobLedger``): a move is applied once per (user,
/// attempt, step); a newer attempt fences off every older one; a user's result counts
/// once, from its current attempt.
public struct BikeJobBook: Sendable, Hashable, Codable {
    /// Why a station refused a move.
    public enum Refusal: Error, Sendable, Hashable, Codable, CustomStringConvertible {
        case staleAttempt(user: Int, attempt: Int, current: Int)
        case outOfOrder(user: Int, step: Int, expected: Int)
        case alreadyFinished(user: Int)
        case jobEnded(user: Int)
        /// A take by a rider, or a leave by a user on foot.
        case wrongOperation(user: Int, step: Int, riding: Bool)
        /// A recorded take from an empty station, or leave at a full one (a replica fed
        /// events out of order).
        case noRoom(user: Int, step: Int, station: Int)

        public var description: String {
            switch self {
            case .staleAttempt(let user, let attempt, let current):
                "user \(user): attempt \(attempt) was fenced off by attempt \(current)"
            case .outOfOrder(let user, let step, let expected):
                "user \(user): step \(step) is out of order (next is \(expected))"
            case .alreadyFinished(let user):
                "user \(user) has already finished"
            case .jobEnded(let user):
                "user \(user): the job has ended"
            case .wrongOperation(let user, let step, let riding):
                "user \(user): step \(step) \(riding ? "takes a bike while riding one" : "leaves a bike it does not have")"
            case .noRoom(let user, let step, let station):
                "user \(user): step \(step) moved a bike at station \(station), which has no room for it"
            }
        }
    }

    /// How a user's part of the job ended, as the report shows it.
    public struct UserEnd: Sendable, Hashable, Codable {
        public var ending: SimulationResult.Ending
        /// The node whose attempt counted (nil when none did).
        public var node: String?
        public var attempts: Int
        /// Why earlier attempts failed, as the report lists them.
        public var reasons: [String]

        public init(ending: SimulationResult.Ending, node: String?, attempts: Int, reasons: [String]) {
            self.ending = ending
            self.node = node
            self.attempts = attempts
            self.reasons = reasons
        }
    }

    /// One user of the job.
    public struct Entry: Sendable, Hashable, Codable {
        /// The newest attempt begun; older attempts are fenced off.
        public var attempt = 0
        public var progress = UserProgress()
        /// Outcome of the last applied step, for an idempotent repeat.
        public var lastOutcome: Bool?
        /// Its result counted (from attempt `attempt`), with this ending.
        public var accepted: SimulationResult.Ending?
        /// How it ended, once it did.
        public var end: UserEnd?

        public init() {}
    }

    /// One change of the book.
    public enum Event: Sendable, Hashable, Codable {
        case attempt(user: Int, attempt: Int)
        /// A take (`take`) or leave at station `station` (an index into ``stations``).
        case move(Move, station: Int, take: Bool)
        case accepted(user: Int, attempt: Int, ending: SimulationResult.Ending)
        case ended(user: Int, UserEnd)
    }

    /// The stations' counts now, in network order (empty for a book that only fences).
    public private(set) var stations: [Station]
    /// The station that ends a user's ride early, if the job has one.
    public let goalIndex: Int?
    public private(set) var entries: [Entry]

    public init(users: Int, stations: [Station] = [], goalIndex: Int? = nil) {
        self.stations = stations
        self.goalIndex = goalIndex
        entries = Array(repeating: Entry(), count: max(0, users))
    }

    /// Starts `attempt` of `user` (fencing off older ones) and returns where it resumes.
    public mutating func beginAttempt(user: Int, attempt: Int) -> UserProgress {
        guard entries.indices.contains(user) else { return UserProgress() }
        entries[user].attempt = max(entries[user].attempt, attempt)
        return entries[user].progress
    }

    /// Applies `move` with `operation` (a station's take or leave, at the station named
    /// `station`) unless the move is stale, out of order, or already applied (then its
    /// recorded outcome is returned, and `applied` is false).
    public mutating func perform(
        _ move: Move, station: String, goal: String?, operation: () -> Bool
    ) throws(Refusal) -> (outcome: Bool, applied: Bool) {
        guard entries.indices.contains(move.user) else { throw .outOfOrder(user: move.user, step: move.step, expected: 0) }
        let entry = entries[move.user]
        guard move.attempt >= entry.attempt else {
            throw .staleAttempt(user: move.user, attempt: move.attempt, current: entry.attempt)
        }
        guard entry.accepted == nil, entry.end == nil else { throw .alreadyFinished(user: move.user) }
        if move.step == entry.progress.moves, let outcome = entry.lastOutcome {
            return (outcome, false)
        }
        guard move.step == entry.progress.moves + 1 else {
            throw .outOfOrder(user: move.user, step: move.step, expected: entry.progress.moves + 1)
        }
        let outcome = operation()
        entries[move.user].attempt = move.attempt
        entries[move.user].progress.record(succeeded: outcome, at: station, goal: goal)
        entries[move.user].lastOutcome = outcome
        return (outcome, true)
    }

    /// Takes (`take`) or leaves a bike at station `station` for `move`, under the rules
    /// of ``perform(_:station:goal:operation:)``. A user on foot can only take and a rider
    /// only leave, so no replayed move can make or lose a bike.
    public mutating func move(_ move: Move, station: Int, take: Bool) throws(Refusal) -> (outcome: Bool, applied: Bool) {
        guard stations.indices.contains(station), entries.indices.contains(move.user) else {
            throw .outOfOrder(user: move.user, step: move.step, expected: 0)
        }
        let isNewStep = move.step == entries[move.user].progress.moves + 1
        if isNewStep, take == entries[move.user].progress.hasBike {
            throw .wrongOperation(user: move.user, step: move.step, riding: entries[move.user].progress.hasBike)
        }
        var counts = stations[station]
        let result = try perform(move, station: "\(station)", goal: goalIndex.map(String.init)) {
            take ? counts.takeBike() : counts.leaveBike()
        }
        stations[station] = counts
        return result
    }

    /// Counts `user`'s result if `attempt` is its current attempt and nothing was counted
    /// yet; returns the user's progress then, or nil.
    public mutating func accept(user: Int, attempt: Int, ending: SimulationResult.Ending = .finishedPaths) -> UserProgress? {
        guard entries.indices.contains(user), entries[user].attempt == attempt, entries[user].accepted == nil else { return nil }
        entries[user].accepted = ending
        return entries[user].progress
    }

    /// Records how `user` ended (the first record stays); false when it had ended already.
    @discardableResult
    public mutating func end(user: Int, _ end: UserEnd) -> Bool {
        guard entries.indices.contains(user), entries[user].end == nil else { return false }
        entries[user].end = end
        return true
    }

    /// Applies an event a coordinator recorded; returns false (changing nothing) for one
    /// that does not apply here (a replica fed the events in their order never sees one).
    @discardableResult
    public mutating func apply(_ event: Event) -> Bool {
        switch event {
        case .attempt(let user, let attempt):
            guard entries.indices.contains(user) else { return false }
            _ = beginAttempt(user: user, attempt: attempt)
            return true
        case .move(let move, let station, let take):
            return (try? self.move(move, station: station, take: take))?.applied ?? false
        case .accepted(let user, let attempt, let ending):
            return accept(user: user, attempt: attempt, ending: ending) != nil
        case .ended(let user, let userEnd):
            return end(user: user, userEnd)
        }
    }

    /// Users with nothing left to run: their result counted, or they ended.
    public var doneUsers: Set<Int> {
        Set(entries.indices.filter { entries[$0].accepted != nil || entries[$0].end != nil })
    }

    /// Bikes at the stations plus bikes being ridden: constant over a job (bikes are
    /// neither made nor lost), which the replicas' checks and the simulator assert.
    public var bikesInPlay: Int {
        stations.reduce(0) { $0 + $1.freeBikes } + entries.count { $0.progress.hasBike }
    }
}
