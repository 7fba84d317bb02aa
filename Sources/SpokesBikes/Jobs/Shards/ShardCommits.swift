/// Which of one shard's events are committed: every event through ``through``, and the
/// later ones in ``above``. A shard commits its events out of order (``ShardCommitOrder``),
/// so a count would not say which. ``insert(_:)`` folds the run after ``through`` into it;
/// ``above`` holds what committed after the oldest event still held back (up to the
/// dependency patience's worth, 10 s of commits), and travels whole in every answer.
public struct ShardCommits: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Every event with a sequence number up to this one is committed.
    public private(set) var through: Int
    /// Committed events after ``through`` (never `through + 1`: that is folded in).
    public private(set) var above: Set<Int>

    /// Events 1 through `through` committed, no later ones.
    public init(through: Int = 0) {
        self.through = through
        above = []
    }

    /// Every event of every shard, as if committed (a model's broken variant uses it).
    public static let everything = ShardCommits(through: .max)

    public func contains(_ seq: Int) -> Bool { seq <= through || above.contains(seq) }

    public mutating func insert(_ seq: Int) {
        guard !contains(seq) else { return }
        above.insert(seq)
        fold()
    }

    /// Adds what `other` (a later answer from the same shard) says is committed.
    public mutating func formUnion(_ other: ShardCommits) {
        if other.through > through {
            through = other.through
            let floor = through
            above = above.filter { $0 > floor }
        }
        let floor = through
        above.formUnion(other.above.lazy.filter { $0 > floor })
        fold()
    }

    private mutating func fold() {
        while through < .max, above.remove(through + 1) != nil { through += 1 }
    }

    public var description: String { above.isEmpty ? "through \(through)" : "through \(through) and \(above.count) after" }
}
