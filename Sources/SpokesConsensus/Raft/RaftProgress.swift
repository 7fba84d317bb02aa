/// What a leader knows of one follower's log, and how it is sending to it.
struct RaftProgress: Sendable, Hashable {
    enum Mode: Sendable, Hashable {
        /// Where the follower's log matches is unknown: one AppendEntries at a time, the
        /// next only after an answer (or a heartbeat answer, if it was lost).
        case probe
        /// The follower matched: entries are pipelined, `next` advances as they are sent.
        case replicate
        /// The follower needs entries the leader compacted; a snapshot is on its way.
        case snapshot(index: Int, sentAt: Double)
    }

    /// The next index to send.
    var next: Int
    /// The highest index known to match (and to be durable on the follower).
    var match = 0
    var mode = Mode.probe
    /// In probe mode: a probe is out and unanswered.
    var probeSent = false
    /// In replicate mode: the last index of each AppendEntries out and unanswered.
    var inFlight: [Int] = []
    /// Heard from since the last CheckQuorum.
    var active = true
    /// When the leader last heard from the follower (an answer to an append or a
    /// heartbeat), or when it began sending to it: how long a follower that stopped
    /// answering (its storage failed, a one-way cut) has been of no use to the group.
    var lastHeard: Double
    /// A leadership transfer's TimeoutNow went to this follower.
    var timeoutNowSent = false

    init(next: Int, heardAt now: Double) {
        self.next = next
        lastHeard = now
    }

    /// The follower answered with success up to `index`. Leaving probe or snapshot mode,
    /// sending resumes right after what the follower confirmed (`match + 1`, as etcd's
    /// `BecomeReplicate`), not from a `next` that probes moved but nobody confirmed. An
    /// answer older than what is known (`index` below `match`) changes no mode.
    mutating func matched(_ index: Int) {
        let current = index >= match
        match = max(match, index)
        inFlight.removeAll { $0 <= match }
        switch mode {
        case .probe where current:
            mode = .replicate
            next = match + 1
            probeSent = false
            inFlight = []
        case .snapshot(let snapshotIndex, _) where match >= snapshotIndex:
            mode = .replicate
            next = match + 1
            inFlight = []
        default:
            next = max(next, match + 1)
        }
    }

    /// Start probing again at `index`.
    mutating func probe(from index: Int) {
        next = max(index, match + 1)
        mode = .probe
        probeSent = false
        inFlight = []
    }
}
