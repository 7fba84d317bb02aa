/// One replicated group (a Raft group) as one of its replicas sees it now: who the
/// replicas are, who leads, in which term, and this replica's own role. A node that hosts
/// groups hands these to its ``ClusterNode`` (``ClusterNode/setReplicaGroups(_:)``); the
/// dashboard shows where each job's leader and replicas are from them.
///
/// Group ids name what the group keeps: `KIND-ID`, where a job's group is `taskjob-JOBID`
/// (a map or sweep), `job-JOBID` (a workload's job, a bike job since protocol 7) or
/// `bikejob-JOBID` (a bike job of an earlier release). For those, ``job`` is the job's id;
/// for other groups it is nil.
public struct ReplicaGroupView: Sendable, Hashable, Codable {
    /// The group's id, e.g. `taskjob-map-0a3f442b`.
    public var id: String
    /// What comes before the id's first `-`, e.g. `taskjob`.
    public var kind: String
    /// The job the group keeps (`map-0a3f442b`), or nil when the group keeps no job.
    public var job: String?
    /// The node whose replica this view is.
    public var node: String
    /// Every replica's node, sorted by name.
    public var replicas: [String]
    /// The leader this replica knows of in ``term``; nil while it knows none (an election).
    public var leader: String?
    /// The replica's current Raft term.
    public var term: Int
    /// This replica's role: `leader`, `follower`, `preCandidate` or `candidate`.
    public var role: String
    /// The highest log index this replica knows to be committed.
    public var commitIndex: Int

    /// Whether groups of `kind` keep one job each: a kind named `job` or `...job` (`job`,
    /// `taskjob`, and an earlier release's `bikejob`), by the rule every job layer names its
    /// groups with; the cluster names no workload's kind.
    public static func keepsAJob(_ kind: String) -> Bool { kind.hasSuffix("job") }

    /// A view of group `id`; its ``kind`` and ``job`` are read from the id.
    public init(id: String, node: String, replicas: [String], leader: String?, term: Int, role: String, commitIndex: Int) {
        self.id = id
        (kind, job) = Self.parse(id)
        self.node = node
        self.replicas = replicas.sorted()
        self.leader = leader
        self.term = term
        self.role = role
        self.commitIndex = commitIndex
    }

    private enum CodingKeys: String, CodingKey { case id, kind, job, node, replicas, leader, term, role, commitIndex }

    /// Decodes a view another node sent; its ``kind`` and ``job`` are read from its id
    /// again, whatever the sender said.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try container.decode(String.self, forKey: .id), node: try container.decode(String.self, forKey: .node),
            replicas: try container.decode([String].self, forKey: .replicas), leader: try container.decodeIfPresent(String.self, forKey: .leader),
            term: try container.decode(Int.self, forKey: .term), role: try container.decode(String.self, forKey: .role),
            commitIndex: try container.decode(Int.self, forKey: .commitIndex))
    }

    /// The kind and job of group id `id`: `("taskjob", "map-1")` for `taskjob-map-1`, and
    /// a nil job when the kind keeps no job (``keepsAJob(_:)``) or nothing follows it.
    public static func parse(_ id: String) -> (kind: String, job: String?) {
        guard let dash = id.firstIndex(of: "-") else { return (id, nil) }
        let kind = String(id[..<dash])
        let rest = String(id[id.index(after: dash)...])
        return (kind, keepsAJob(kind) && !rest.isEmpty ? rest : nil)
    }

    /// True when this replica leads its group.
    public var isLeader: Bool { leader == node && role == "leader" }

    /// Of several replicas' views of one group, the one that knows most: the highest term,
    /// then the leader's own view, then one that knows a leader, then the highest commit
    /// index. Raft has at most one leader per term, so the result never names an older
    /// leader than some view knows.
    public static func mostInformed(_ views: some Sequence<ReplicaGroupView>) -> ReplicaGroupView? {
        views.max { a, b in
            (a.term, a.isLeader ? 1 : 0, a.leader == nil ? 0 : 1, a.commitIndex) < (b.term, b.isLeader ? 1 : 0, b.leader == nil ? 0 : 1, b.commitIndex)
        }
    }
}
