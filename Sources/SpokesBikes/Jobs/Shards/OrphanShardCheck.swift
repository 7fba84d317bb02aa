/// Decides when a station shard group has outlived its job, so its replicas stop keeping
/// it (issue 19: a shard group is marked finished once its job's finish is committed, and
/// two coordinator deaths skip that: one between opening the shards and opening the job's
/// own group, one between committing the job's finish and telling the shards' hosts).
///
/// A pure state machine over time and answers: the watcher of the groups this node leads
/// asks it whether to look the job up now (at most every ``askEvery`` seconds per job),
/// and tells it what the lookup found. A job found ended is an orphan's at once; a job no
/// node knows is only after ``patience`` seconds of not being known (a partition may hide
/// its coordinator and replicas for a while; marking a live job's shard finished would
/// cost it an epoch, and removing the group, the shard).
public struct OrphanShardCheck: Sendable {
    /// What a lookup of a job found.
    public enum Fate: Sendable, Equatable {
        /// A node coordinates it or holds it unfinished.
        case running
        /// A node stored its end.
        case ended
        /// No node answering knows it.
        case unknown
    }

    public let askEvery: Double
    public let patience: Double
    private var lastAsked: [String: Double] = [:]
    private var unknownSince: [String: Double] = [:]

    public init(askEvery: Double = 30, patience: Double = 300) {
        self.askEvery = askEvery
        self.patience = patience
    }

    /// Whether to look `job` up at `now`. Jobs not asked about for twice the patience (their
    /// groups are gone) are forgotten.
    public mutating func shouldAsk(about job: String, at now: Double) -> Bool {
        if let last = lastAsked[job], now - last < askEvery { return false }
        let stale = lastAsked.filter { now - $0.value >= 2 * max(askEvery, patience) }.keys
        for old in stale { forget(old) }
        lastAsked[job] = now
        return true
    }

    /// Records what a lookup of `job` found at `now`; true when its shard groups are
    /// orphans (mark them finished).
    public mutating func found(_ fate: Fate, for job: String, at now: Double) -> Bool {
        switch fate {
        case .running:
            unknownSince[job] = nil
            return false
        case .ended:
            return true
        case .unknown:
            let since = unknownSince[job] ?? now
            unknownSince[job] = since
            return now - since >= patience
        }
    }

    /// Forgets `job` (its groups are gone from this node).
    public mutating func forget(_ job: String) {
        lastAsked[job] = nil
        unknownSince[job] = nil
    }
}
