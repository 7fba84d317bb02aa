/// One entry of a group's replicated log.
///
/// `command` is opaque to Raft: the application's own encoding (usually JSON text).
/// `nil` is the no-op a new leader appends at the start of its term (Raft §8): it lets
/// the leader commit, by counting, the entries of earlier terms below it. Applications
/// skip no-ops.
///
/// `replicas`, when set, makes the entry a configuration change (its command is nil):
/// from this entry on, the group's replicas are these. A replica uses the latest
/// configuration in its log, committed or not (single-server changes, Raft thesis §4.1).
///
/// Identity: an entry is named by `(index, term)`. Only one leader exists per term and a
/// leader never overwrites its own entries, so two logs holding the same `(index, term)`
/// hold the same command there, and the same entries before it (Log Matching).
public struct RaftEntry: Codable, Sendable, Hashable {
    public var index: Int
    public var term: Int
    public var command: String?
    /// The group's replicas from this entry on, sorted; nil for every other entry.
    public var replicas: [String]?

    public init(index: Int, term: Int, command: String?, replicas: [String]? = nil) {
        self.index = index
        self.term = term
        self.command = command
        self.replicas = replicas
    }

    /// Bytes this entry adds to a message or a log record, for batching limits.
    var approximateSize: Int { (command?.utf8.count ?? 0) + (replicas?.reduce(0) { $0 + $1.utf8.count + 4 } ?? 0) + 24 }
}

/// A position in the log: an entry's index and term.
public struct RaftLogPosition: Codable, Sendable, Hashable, Comparable, CustomStringConvertible {
    public var index: Int
    public var term: Int

    public init(index: Int, term: Int) {
        self.index = index
        self.term = term
    }

    /// Raft's "at least as up-to-date" order (§5.4.1): the later last term wins, then
    /// the longer log.
    public static func < (lhs: RaftLogPosition, rhs: RaftLogPosition) -> Bool {
        lhs.term != rhs.term ? lhs.term < rhs.term : lhs.index < rhs.index
    }

    public var description: String { "\(index)@\(term)" }
}

/// What a replica must keep across restarts besides its log: the latest term it has
/// seen and whom it voted for in that term. Losing either could let it vote twice in one
/// term, and so elect two leaders.
public struct RaftHardState: Codable, Sendable, Hashable {
    public var term: Int
    public var votedFor: String?

    public init(term: Int, votedFor: String?) {
        self.term = term
        self.votedFor = votedFor
    }
}

/// The application's state as of a log index: it replaces every entry up to and
/// including `index`, whose term is `term`. `data` is opaque to Raft (usually JSON text).
/// `replicas` is the group's configuration as of `index` when a change preceded it (nil:
/// the replicas the group was created with).
public struct RaftSnapshot: Codable, Sendable, Hashable {
    public var index: Int
    public var term: Int
    public var data: String
    public var replicas: [String]?

    public init(index: Int, term: Int, data: String, replicas: [String]? = nil) {
        self.index = index
        self.term = term
        self.data = data
        self.replicas = replicas
    }

    public var position: RaftLogPosition { RaftLogPosition(index: index, term: term) }
}

/// Everything a replica persisted: what `RaftStorage` recovers on open and what a
/// `RaftReplica` starts from. The entries follow the snapshot (or index 0) without gaps.
public struct RaftDurableState: Sendable, Hashable {
    public var hardState: RaftHardState
    public var snapshot: RaftSnapshot?
    public var entries: [RaftEntry]

    public init(hardState: RaftHardState = RaftHardState(term: 0, votedFor: nil), snapshot: RaftSnapshot? = nil, entries: [RaftEntry] = []) {
        self.hardState = hardState
        self.snapshot = snapshot
        self.entries = entries
    }

    /// A replica that has never persisted anything.
    public static let empty = RaftDurableState()

    /// The index and term of the last entry (or of the snapshot, or 0/0).
    public var lastPosition: RaftLogPosition {
        if let last = entries.last { return RaftLogPosition(index: last.index, term: last.term) }
        return snapshot?.position ?? RaftLogPosition(index: 0, term: 0)
    }
}
