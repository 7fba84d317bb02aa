import SpokesConsensus

/// Everything a `RaftHost` can be tuned by, in one place.
public struct RaftHostSettings: Sendable, Hashable {
    /// Where the groups live: one directory per group, named by its id, holding the
    /// group's `log` and `snapshot` (`RaftStorage`).
    public var dataDirectory: String
    /// Timing and batching of every replica: heartbeats every 0.1 s, elections after
    /// 0.6-1.2 s of silence by default (`RaftConfiguration`'s defaults).
    public var raft: RaftConfiguration
    /// How long `propose` waits for its command to be committed and applied before it
    /// gives up with `RaftHostError.outcomeUnknown` (the command may still commit).
    public var proposalTimeout: Double
    /// A replica snapshots its state machine and compacts its log once this many
    /// entries were applied since its last snapshot.
    public var snapshotEvery: Int
    /// Messages waiting for one peer beyond this many are dropped, oldest first (Raft
    /// resends what matters); bounds the memory a dead or frozen peer costs.
    public var maximumQueuedMessages: Int
    /// About this many bytes of commands and snapshots at most in one call to a peer
    /// (well below `ClusterSettings.maximumFrameSize`).
    public var maximumCallBytes: Int
    /// At most this many messages in one call to a peer (well below
    /// `ClusterSettings.maximumArrayLength`).
    public var maximumCallMessages: Int

    public init(
        dataDirectory: String, raft: RaftConfiguration = RaftConfiguration(), proposalTimeout: Double = 5, snapshotEvery: Int = 1000,
        maximumQueuedMessages: Int = 10_000, maximumCallBytes: Int = 1 << 20, maximumCallMessages: Int = 4096
    ) {
        self.dataDirectory = dataDirectory
        self.raft = raft
        self.proposalTimeout = proposalTimeout
        self.snapshotEvery = max(1, snapshotEvery)
        self.maximumQueuedMessages = max(1, maximumQueuedMessages)
        self.maximumCallBytes = max(1, maximumCallBytes)
        self.maximumCallMessages = max(1, maximumCallMessages)
    }
}
