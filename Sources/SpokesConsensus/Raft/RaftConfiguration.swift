/// Timing and batching of a replica. The defaults suit a LAN: a dead leader is
/// replaced within about 1.3 s (the longest election timeout plus two round trips and a
/// disk flush), heartbeats cost 10 small messages per follower per second.
public struct RaftConfiguration: Sendable, Hashable, Codable {
    /// How often a leader sends heartbeats (seconds).
    public var heartbeatInterval: Double
    /// A follower that hears nothing from a leader for a time drawn uniformly from this
    /// range starts an election. Its lower bound is also the leader lease: a replica that
    /// heard from its leader more recently refuses to help depose it (PreVote and
    /// RequestVote), and a leader that did not hear from a majority in two such windows in
    /// a row steps down (CheckQuorum).
    public var electionTimeout: ClosedRange<Double>
    /// At most this many entries per AppendEntries message.
    public var maxEntriesPerMessage: Int
    /// At most about this many bytes of commands per AppendEntries message (one entry
    /// always goes, however large).
    public var maxBytesPerMessage: Int
    /// At most this many AppendEntries messages with entries outstanding per follower
    /// (pipelining); a follower that lost messages falls back to one probe at a time.
    public var maxMessagesInFlight: Int
    /// A snapshot goes to a follower in InstallSnapshot messages of at most about this
    /// many bytes of its data each, so no snapshot is too large for a frame (a state
    /// machine's snapshot can be far larger than a frame; sent whole, every resend closed
    /// the connection and the follower never caught up).
    public var maxSnapshotChunkBytes: Int
    /// A follower refuses a snapshot announced larger than this: a peer's number never
    /// makes it hold more.
    public var maxSnapshotBytes: Int

    public init(
        heartbeatInterval: Double = 0.1, electionTimeout: ClosedRange<Double> = 0.6...1.2, maxEntriesPerMessage: Int = 512, maxBytesPerMessage: Int = 256 * 1024,
        maxMessagesInFlight: Int = 8, maxSnapshotChunkBytes: Int = 512 * 1024, maxSnapshotBytes: Int = 1 << 30
    ) {
        self.maxSnapshotChunkBytes = max(4, maxSnapshotChunkBytes)
        self.maxSnapshotBytes = max(0, maxSnapshotBytes)
        self.heartbeatInterval = heartbeatInterval
        self.electionTimeout = electionTimeout
        self.maxEntriesPerMessage = max(1, maxEntriesPerMessage)
        self.maxBytesPerMessage = max(1, maxBytesPerMessage)
        self.maxMessagesInFlight = max(1, maxMessagesInFlight)
    }
}
