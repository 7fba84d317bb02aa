/// A running job's part in the sharing of the cluster's slots (issue 32), as `spokes jobs`
/// and the dashboard show it: whose it is, its priority and cap, the budget it draws on,
/// the places it holds now, and its fair share of that budget among the running jobs.
public struct JobSlots: Sendable, Hashable, Codable {
    /// Owner, priority (as its coordinator applies it) and cap.
    public var share: JobShare
    /// The budget its tasks take: cpu slots or waiting slots.
    public var cost: TaskCost
    /// Attempts sent and not answered yet: running, or waiting in a worker's queue.
    public var inUse: Int
    /// Tasks not ended yet: the most places it could use.
    public var remaining: Int
    /// Its fair share of the cluster's slots of ``cost`` (``FairShare``, over the running
    /// jobs' remaining tasks); nil until ``shares(of:budgets:)`` set it.
    public var fairShare: Double?

    public init(share: JobShare, cost: TaskCost, inUse: Int, remaining: Int, fairShare: Double? = nil) {
        self.share = share
        self.cost = cost
        self.inUse = inUse
        self.remaining = remaining
        self.fairShare = fairShare
    }

    /// Each job's fair share of `budgets` (the cluster's slots: every alive member's
    /// added up), by job id, per budget: the jobs drawing on one budget share it.
    public static func shares(of jobs: [String: JobSlots], budgets: TaskBudgets) -> [String: Double] {
        var shares: [String: Double] = [:]
        for cost in TaskCost.allCases {
            let claims = jobs.filter { $0.value.cost == cost }.map { id, job in
                FairShare.Claim(job: id, owner: job.share.owner, weight: job.share.priority, demand: job.remaining, maxSlots: job.share.maxSlots)
            }
            shares.merge(FairShare.shares(of: budgets[cost], among: claims)) { $1 }
        }
        return shares
    }
}
