/// Names one station operation of one user: its attempt (1 for the first try, higher
/// after retries) and its step (the n-th station the user arrives at, from 1).
///
/// Stations on a cluster use it to make operations idempotent and to fence off a
/// retried user's old attempt; local stations ignore it.
public struct Move: Sendable, Hashable, Codable {
    public var user: Int
    public var attempt: Int
    public var step: Int

    public init(user: Int, attempt: Int, step: Int) {
        self.user = user
        self.attempt = attempt
        self.step = step
    }
}

/// How far a user has got: everything needed to resume it after its last acknowledged
/// step. The random stream is resumed by drawing `moves` times.
public struct UserProgress: Sendable, Hashable, Codable {
    public var moves = 0
    public var hasBike = false
    public var paths = 0
    public var failedTakes = 0
    public var failedLeaves = 0
    public var reachedGoal = false

    public init() {}

    /// Applies the outcome of the next step: a take (on foot) or a leave (riding) at
    /// `station`, which succeeded or not.
    public mutating func record(succeeded: Bool, at station: String, goal: String?) {
        moves += 1
        switch (hasBike, succeeded) {
        case (false, true): hasBike = true
        case (false, false): failedTakes += 1
        case (true, true):
            hasBike = false
            paths += 1
            if station == goal { reachedGoal = true }
        case (true, false): failedLeaves += 1
        }
    }

    /// Whether the user is done with `paths` paths to ride.
    public func isFinished(paths target: Int) -> Bool {
        reachedGoal || paths >= target
    }
}
