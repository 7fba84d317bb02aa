import FoundationEssentials

/// Who a job belongs to and how much of the cluster it may take (issue 32): what a
/// submitter sets (`--owner`, `--priority`, `--max-slots`), what its coordinator carries
/// on every task attempt (``TaskRequest/share``), and what each worker shares its slots
/// by (``FairShare``, ``WorkerAdmission``). Nil where an older peer sent none: such
/// attempts count as one job of an unnamed owner at the default priority.
///
/// The owner is what the submitter says: anyone holding the cluster secret may run jobs,
/// so this is fairness between colleagues, not a defence against them.
public struct JobShare: Sendable, Hashable, Codable {
    /// Whom the job belongs to: slots are shared equally between owners first.
    public var owner: String
    /// The job's weight among its owner's jobs, in ``priorities``; a node lowers it to its
    /// `jobs.max_priority`.
    public var priority: Int
    /// At most this many attempts of the job run or wait at once, across the cluster
    /// (its coordinator holds the rest back); nil: no cap.
    public var maxSlots: Int?

    public init(owner: String, priority: Int = JobShare.defaultPriority, maxSlots: Int? = nil) {
        self.owner = owner
        self.priority = priority
        self.maxSlots = maxSlots
    }

    /// Priorities a job may ask for: a small range, so nobody takes the cluster by typing
    /// a large number (and a node's `jobs.max_priority` may lower the top).
    public static let priorities = 1...10
    /// A job's priority when its submitter gives none: the middle, so background work can
    /// ask for less.
    public static let defaultPriority = 5
    /// Longest owner name, in bytes.
    public static let maximumOwnerBytes = 100
    /// Attempts of one job older peers' tasks count as: no owner named.
    public static let unnamed = JobShare(owner: "")

    /// The submitting user's name: `$USER`, else `$LOGNAME`, else `unknown`.
    public static func submitter(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        for key in ["USER", "LOGNAME"] {
            if let name = environment[key], !name.isEmpty { return String(name.utf8.prefix(maximumOwnerBytes)) ?? "unknown" }
        }
        return "unknown"
    }

    /// A job of the submitting user's, at the default priority, without a cap.
    public static func ofSubmitter() -> JobShare { JobShare(owner: submitter()) }

    /// Throws when a field a peer or a user sent is out of range: the owner's length,
    /// the priority, the cap.
    public func checkRanges() throws(OutOfRange) {
        try OutOfRange.check("owner length", owner.utf8.count, in: 0...Self.maximumOwnerBytes)
        try OutOfRange.check("priority", priority, in: Self.priorities)
        if let maxSlots { try OutOfRange.check("max slots", maxSlots, in: 1...Int(Int32.max)) }
    }

    /// This share with its priority lowered to `maximum` (a node's `jobs.max_priority`)
    /// when above it.
    public func capped(atPriority maximum: Int) -> JobShare {
        var capped = self
        capped.priority = max(Self.priorities.lowerBound, min(priority, maximum))
        return capped
    }
}
