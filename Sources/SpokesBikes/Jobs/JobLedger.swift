import Synchronization

/// The coordinator's record of every user of a bike job, and of its stations: which
/// attempt may act, and how far each user has got. It is what makes a cluster job
/// exactly-once. It holds a ``BikeJobBook`` behind one lock.
///
/// - Each station operation (``Move``) is applied once: a repeat of the user's last
///   step returns the recorded outcome; a step out of order is refused.
/// - ``beginAttempt(user:attempt:)`` fences off every older attempt: their moves are
///   refused from then on, and the new attempt resumes from the last acknowledged step.
/// - ``accept(user:attempt:ending:)`` counts a user's result once, and only from its current
///   attempt.
///
/// Station changes happen while the ledger's lock is held, so a check and the change it
/// allows cannot be separated. ``close()`` ends the job: no station changes after it,
/// so a report built from the ledger afterwards is consistent even if a cancelled
/// attempt on another node is still trying to move.
///
/// A recording ledger (a replicated job's) also keeps every change as a
/// ``BikeJobBook/Event``, in the order it made them, until ``takeEvents(limit:)`` hands
/// them on to be replicated: replicas that apply them in that order reach this state.
public final class JobLedger: Sendable {
    public typealias Refusal = BikeJobBook.Refusal

    private struct State {
        var book: BikeJobBook
        var closed = false
        /// Changes not yet handed on, oldest first; nil when the ledger does not record.
        var events: [BikeJobBook.Event]?
        /// Events made so far (handed on or not).
        var made = 0
    }

    private let state: Mutex<State>
    /// Rings (at most once until the events are taken) when a recording ledger has new events.
    private let doorbell: AsyncStream<Void>.Continuation?
    /// The stream ``doorbell`` rings on.
    public let newEvents: AsyncStream<Void>

    /// A ledger of `users` with no stations of its own (the caller's operations change them).
    public convenience init(users: Int) {
        self.init(book: BikeJobBook(users: users), recording: false)
    }

    /// A ledger holding `book`; `recording` keeps its changes as events.
    public init(book: BikeJobBook, recording: Bool) {
        state = Mutex(State(book: book, events: recording ? [] : nil))
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        newEvents = stream
        doorbell = recording ? continuation : nil
        if !recording { continuation.finish() }
    }

    /// Ends the job: every later move is refused, so the stations stop changing.
    public func close() {
        state.withLock { $0.closed = true }
    }

    /// Starts `attempt` of `user` (fencing off older ones) and returns where it resumes.
    public func beginAttempt(user: Int, attempt: Int) -> UserProgress {
        change { state in
            (state.book.beginAttempt(user: user, attempt: attempt), .attempt(user: user, attempt: attempt))
        }
    }

    /// Applies `move` with `operation` (a station's take or leave, for a ledger without
    /// stations) unless the move is stale, out of order, or already applied (then its
    /// recorded outcome is returned).
    public func perform(_ move: Move, station: String, goal: String?, operation: () -> Bool) throws(Refusal) -> Bool {
        try state.withLock { (state) throws(Refusal) -> Bool in
            guard !state.closed else { throw .jobEnded(user: move.user) }
            return try state.book.perform(move, station: station, goal: goal, operation: operation).outcome
        }
    }

    /// Takes (`take`) or leaves a bike at the ledger's station `station` for `move`.
    public func move(_ move: Move, station: Int, take: Bool) throws(Refusal) -> Bool {
        try state.withLock { (state) throws(Refusal) -> Bool in try apply(move, station: station, take: take, in: &state) }
    }

    /// Applies `moves` in order under one hold of the lock, each as ``move(_:station:take:)``
    /// would: a refused move is answered with its refusal and the next is applied.
    public func apply(_ moves: [StationMove]) -> [StationMove.Outcome] {
        state.withLock { state in
            moves.map { move in
                do throws(Refusal) {
                    return .done(try apply(move.move, station: move.station, take: move.take, in: &state))
                } catch {
                    return .refused(error)
                }
            }
        }
    }

    /// One move under the lock (`state` is the locked state).
    private func apply(_ move: Move, station: Int, take: Bool, in state: inout State) throws(Refusal) -> Bool {
        guard !state.closed else { throw .jobEnded(user: move.user) }
        let (outcome, applied) = try state.book.move(move, station: station, take: take)
        if applied { record(.move(move, station: station, take: take), in: &state) }
        return outcome
    }

    /// Counts `user`'s result if `attempt` is its current attempt and nothing was
    /// counted yet; returns the user's progress then, or nil.
    public func accept(user: Int, attempt: Int, ending: SimulationResult.Ending = .finishedPaths) -> UserProgress? {
        change { state in
            let progress = state.book.accept(user: user, attempt: attempt, ending: ending)
            return (progress, progress == nil ? nil : .accepted(user: user, attempt: attempt, ending: ending))
        }
    }

    /// Records how `user` ended.
    public func end(user: Int, _ end: BikeJobBook.UserEnd) {
        change { state in
            ((), state.book.end(user: user, end) ? .ended(user: user, end) : nil)
        }
    }

    /// No more events will be made (the job is closed): ``newEvents`` ends once its last
    /// ring was heard.
    public func stopRecording() {
        doorbell?.finish()
    }

    /// Where `user` is now.
    public func progress(user: Int) -> UserProgress {
        state.withLock { $0.book.entries.indices.contains(user) ? $0.book.entries[user].progress : UserProgress() }
    }

    /// The whole book now.
    public var book: BikeJobBook { state.withLock { $0.book } }

    /// Station `index`'s counts now (`index` is one of the book's stations).
    public func station(_ index: Int) -> Station {
        state.withLock { $0.book.stations[index] }
    }

    /// Hands on up to `limit` of the oldest events not handed on yet, and how many events
    /// were made before the first of them.
    public func takeEvents(limit: Int) -> (events: [BikeJobBook.Event], before: Int) {
        state.withLock { state in
            guard let events = state.events, !events.isEmpty else { return ([], state.made) }
            let taken = Array(events.prefix(limit))
            state.events = Array(events.dropFirst(taken.count))
            return (taken, state.made - events.count)
        }
    }

    /// Events made so far.
    public var eventsMade: Int { state.withLock { $0.made } }

    /// Runs `body` under the lock and records the event it returns, if any.
    private func change<Result>(_ body: (inout State) -> (Result, BikeJobBook.Event?)) -> Result {
        state.withLock { state in
            let (result, event) = body(&state)
            if let event { record(event, in: &state) }
            return result
        }
    }

    private func record(_ event: BikeJobBook.Event, in state: inout State) {
        guard state.events != nil else { return }
        let wasEmpty = state.events?.isEmpty ?? true
        state.events?.append(event)
        state.made += 1
        if wasEmpty { doorbell?.yield() }
    }
}
