/// The fairness rule (issue 32), as a pure function: how a budget's slots are shared
/// between the jobs that want them. No clock, no I/O; a worker applies it to the jobs it
/// sees (``WorkerAdmission``), `spokes jobs` to the jobs the cluster runs.
///
/// Max-min fair, in two levels:
/// 1. between **owners** with work waiting, equally: each owner's demand is the sum of
///    its jobs' demands;
/// 2. then, within each owner's part, between that owner's **jobs**, in proportion to
///    their weights (``JobShare/priority``).
///
/// At each level a claimant that needs less than its share gets what it needs, and the
/// rest is shared again among the others (water-filling), so no slot is held back while
/// someone wants it. A job's demand is capped by its ``JobShare/maxSlots``. Shares are
/// fractions of slots: a worker compares a job's running attempts with its share.
public enum FairShare {
    /// One job's claim on a budget.
    public struct Claim: Sendable, Hashable {
        /// The job's id: the key of the answer.
        public var job: String
        /// Whom the job belongs to.
        public var owner: String
        /// The job's weight among its owner's jobs (at least 1 counts; below is taken as 1).
        public var weight: Int
        /// Slots it could use now (running and waiting attempts), before its cap.
        public var demand: Int
        /// At most this many slots, whatever its share (nil: no cap).
        public var maxSlots: Int?

        public init(job: String, owner: String, weight: Int, demand: Int, maxSlots: Int? = nil) {
            self.job = job
            self.owner = owner
            self.weight = weight
            self.demand = demand
            self.maxSlots = maxSlots
        }

        /// The demand the rule uses: never negative, never above the cap.
        public var cappedDemand: Int { max(0, min(demand, maxSlots.map { max(0, $0) } ?? demand)) }
    }

    /// Each claim's fair share of `slots` slots, by job id (every claim has an entry; a
    /// job that wants nothing gets 0). The shares add up to at most `slots`, and to
    /// exactly the smaller of `slots` and the total demand.
    public static func shares(of slots: Int, among claims: [Claim]) -> [String: Double] {
        var result: [String: Double] = [:]
        for claim in claims { result[claim.job] = 0 }
        let byOwner = Dictionary(grouping: claims.filter { $0.cappedDemand > 0 }, by: \.owner)
        let owners = byOwner.keys.sorted()
        let ownerParts = waterFill(
            Double(max(0, slots)),
            demands: owners.map { owner in Double(byOwner[owner]!.reduce(0) { $0 + $1.cappedDemand }) },
            weights: owners.map { _ in 1 })
        for (owner, part) in zip(owners, ownerParts) {
            let jobs = byOwner[owner]!
            let jobParts = waterFill(part, demands: jobs.map { Double($0.cappedDemand) }, weights: jobs.map { Double(max(1, $0.weight)) })
            for (job, share) in zip(jobs, jobParts) { result[job.job, default: 0] += share }
        }
        return result
    }

    /// Weighted max-min fair division of `capacity` among claimants that want `demands`
    /// (each at least 0), in proportion to `weights` (each above 0): a claimant whose
    /// demand is below its weighted part gets its demand, and what it leaves is divided
    /// again among the rest. Returns one part per claimant, in order.
    public static func waterFill(_ capacity: Double, demands: [Double], weights: [Double]) -> [Double] {
        precondition(demands.count == weights.count, "one weight per demand")
        var parts = [Double](repeating: 0, count: demands.count)
        var open = Array(demands.indices.filter { demands[$0] > 0 })
        var left = max(0, capacity)
        while !open.isEmpty, left > 0 {
            let totalWeight = open.reduce(0) { $0 + weights[$1] }
            let level = left / totalWeight
            let satisfied = open.filter { demands[$0] <= level * weights[$0] }
            if satisfied.isEmpty {
                for index in open { parts[index] = level * weights[index] }
                return parts
            }
            for index in satisfied {
                parts[index] = demands[index]
                left -= demands[index]
            }
            open.removeAll { demands[$0] <= level * weights[$0] }
        }
        return parts
    }
}
