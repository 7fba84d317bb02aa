/// What a `RaftReplica` asks its shell to do. Every input returns a batch of actions;
/// the shell carries them out under this contract (the replica's safety depends on it):
///
/// 1. **Persist before send.** A `send` may go out only once every `persist` returned
///    before it (in its own batch or in an earlier one) is durable. Writes are applied to
///    storage in the order returned; several batches' writes may share one flush (group
///    commit), and then the sends queued behind them go out together. A vote therefore
///    never leaves before the vote is on disk, and an AppendEntries acknowledgement never
///    before the acknowledged entries are.
/// 2. **Report durability.** After a flush, call `persisted(through:term:now:)` with the
///    position of the last entry the storage holds (`RaftStorage.sync()` returns it). A
///    leader counts its own log toward a majority only up to that position; a
///    single-replica group commits on it.
/// 3. **Apply in order.** `apply` and `applySnapshot` actions go to the state machine in
///    the order returned, each exactly once. They need not wait for a flush: whatever is
///    applied is committed, so already durable on a majority.
/// 4. `stateChanged` is information (for routing proposals, dashboards, logs).
///
/// Within one batch the `persist` (at most one) comes first, then sends, applies and a
/// state change.
public enum RaftAction: Sendable, Hashable {
    /// Make this write durable (see the contract above).
    case persist(RaftWrite)
    /// Send a message to another replica of the group. Messages may be lost, duplicated
    /// or reordered: Raft tolerates all three.
    case send(to: String, RaftMessage)
    /// Committed entries, in log order, contiguous with what was applied before (no-ops
    /// included, with a nil command). Each index is applied once per replica lifetime.
    case apply([RaftEntry])
    /// Replace the state machine's state with this snapshot. Comes first after a restart
    /// from a snapshot, and when the leader sent one; entries after it follow.
    case applySnapshot(RaftSnapshot)
    /// The replica's role, term or known leader changed.
    case stateChanged(RaftStatus)
}

/// One write to a replica's storage, applied in this order: hard state, snapshot (and
/// compaction: entries it covers are dropped; later ones are kept if the log holds the
/// snapshot's last entry with its term, and dropped otherwise), truncation (entries
/// after `truncateAfter` are dropped), then `entries` are appended.
public struct RaftWrite: Sendable, Hashable {
    public var hardState: RaftHardState?
    public var snapshot: RaftSnapshot?
    public var truncateAfter: Int?
    public var entries: [RaftEntry]

    public init(hardState: RaftHardState? = nil, snapshot: RaftSnapshot? = nil, truncateAfter: Int? = nil, entries: [RaftEntry] = []) {
        self.hardState = hardState
        self.snapshot = snapshot
        self.truncateAfter = truncateAfter
        self.entries = entries
    }

    public var isEmpty: Bool { hardState == nil && snapshot == nil && truncateAfter == nil && entries.isEmpty }

    /// Drops entries after `index`, including any this write was about to append.
    mutating func truncate(after index: Int) {
        entries.removeAll { $0.index > index }
        truncateAfter = min(truncateAfter ?? index, index)
    }
}

/// The outcome of `propose`.
public enum RaftProposal: Sendable, Hashable {
    /// The commands were appended at `indices` in `term`. They are committed when
    /// entries at those indices are applied with this term; if an entry of another term
    /// is applied at one of them, that command was lost in a change of leader (propose it
    /// again; applications make commands idempotent for this).
    case accepted(term: Int, indices: Range<Int>)
    /// This replica is not an accepting leader; `leaderHint` is the replica it believes
    /// leads (or is taking over), if any.
    case notLeader(leaderHint: String?)
}

/// A replica's role in its group.
public enum RaftRole: String, Sendable, Hashable, Codable {
    case follower
    /// Asking for pre-votes (PreVote), still in its old term.
    case preCandidate
    case candidate
    case leader
}

/// Role, term and known leader: what `stateChanged` reports.
public struct RaftStatus: Sendable, Hashable, Codable, CustomStringConvertible {
    public var role: RaftRole
    public var term: Int
    public var leader: String?

    public init(role: RaftRole, term: Int, leader: String?) {
        self.role = role
        self.term = term
        self.leader = leader
    }

    public var description: String { "\(role.rawValue) t\(term) leader \(leader ?? "-")" }
}
