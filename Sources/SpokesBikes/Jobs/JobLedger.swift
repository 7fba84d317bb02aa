import Synchronization

/// The coordinator's record of every user of a bike job: which attempt may act, and how
/// far the user has got. It is what makes a cluster job exactly-once.
///
/// - Each station operation (``Move``) is applied once: a repeat of the user's last
///   step returns the recorded outcome; a step out of order is refused.
/// - ``beginAttempt(user:attempt:)`` fences off every older attempt: their moves are
///   refused from then on, and the new attempt resumes from the last acknowledged step.
/// - ``accept(user:attempt:)`` counts a user's result once, and only from its current
///   attempt.
///
/// Station changes happen inside ``perform(_:station:goal:operation:)`` while the
/// ledger's lock is held, so a check and the change it allows cannot be separated.
/// ``close()`` ends the job: no station changes after it, so a report built from the
/// ledger and the stations afterwards is consistent even if a cancelled attempt on
/// another node is still trying to move.
public final class JobLedger: Sendable {
    /// Why a station refused a move.
    public enum Refusal: Error, Sendable, Hashable, Codable, CustomStringConvertible {
        case staleAttempt(user: Int, attempt: Int, current: Int)
        case outOfOrder(user: Int, step: Int, expected: Int)
        case alreadyFinished(user: Int)
        case jobEnded(user: Int)

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
            }
        }
    }

    struct Entry {
        var attempt = 0
        var progress = UserProgress()
        /// Outcome of the last applied step, for an idempotent repeat.
        var lastOutcome: Bool?
        var accepted = false
    }

    private struct Book {
        var entries: [Entry]
        var closed = false
    }

    private let book: Mutex<Book>

    public init(users: Int) {
        book = Mutex(Book(entries: Array(repeating: Entry(), count: users)))
    }

    /// Ends the job: every later move is refused, so the stations stop changing.
    public func close() {
        book.withLock { $0.closed = true }
    }

    /// Starts `attempt` of `user` (fencing off older ones) and returns where it resumes.
    public func beginAttempt(user: Int, attempt: Int) -> UserProgress {
        book.withLock { book in
            book.entries[user].attempt = max(book.entries[user].attempt, attempt)
            return book.entries[user].progress
        }
    }

    /// Applies `move` with `operation` (a station's take or leave) unless the move is
    /// stale, out of order, or already applied (then its recorded outcome is returned).
    public func perform(_ move: Move, station: String, goal: String?, operation: () -> Bool) throws(Refusal) -> Bool {
        try book.withLock { (book) throws(Refusal) -> Bool in
            guard book.entries.indices.contains(move.user) else { throw .outOfOrder(user: move.user, step: move.step, expected: 0) }
            guard !book.closed else { throw .jobEnded(user: move.user) }
            let entry = book.entries[move.user]
            guard move.attempt >= entry.attempt else {
                throw .staleAttempt(user: move.user, attempt: move.attempt, current: entry.attempt)
            }
            guard !entry.accepted else { throw .alreadyFinished(user: move.user) }
            if move.step == entry.progress.moves, let outcome = entry.lastOutcome {
                return outcome
            }
            guard move.step == entry.progress.moves + 1 else {
                throw .outOfOrder(user: move.user, step: move.step, expected: entry.progress.moves + 1)
            }
            let outcome = operation()
            book.entries[move.user].attempt = move.attempt
            book.entries[move.user].progress.record(succeeded: outcome, at: station, goal: goal)
            book.entries[move.user].lastOutcome = outcome
            return outcome
        }
    }

    /// Counts `user`'s result if `attempt` is its current attempt and nothing was
    /// counted yet; returns the user's progress then, or nil.
    public func accept(user: Int, attempt: Int) -> UserProgress? {
        book.withLock { book in
            guard book.entries.indices.contains(user), book.entries[user].attempt == attempt, !book.entries[user].accepted else { return nil }
            book.entries[user].accepted = true
            return book.entries[user].progress
        }
    }

    /// Where `user` is now.
    public func progress(user: Int) -> UserProgress {
        book.withLock { $0.entries[user].progress }
    }
}
