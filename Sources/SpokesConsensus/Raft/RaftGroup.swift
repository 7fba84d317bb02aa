/// Who replicates one group's log: a fixed set of replicas, chosen when the group is
/// created and never changed (so Raft needs no membership-change protocol), and
/// optionally the leader of its first term.
///
/// A designated first leader is treated as having won term 1 with every replica's vote:
/// every replica starts in term 1 having voted for it, nobody campaigns for term 1, and
/// the first leader leads term 1 from its first step. That is safe because it is what
/// an election with all votes would have left behind, and it needs nothing on disk: the
/// group's definition (the same on every replica, every time it is constructed) carries
/// it. It lets the creator of many groups place their first leaders on different nodes.
public struct RaftGroup: Sendable, Hashable, Codable {
    /// Replica names, sorted, without repeats.
    public let replicas: [String]
    /// The leader of term 1, if the group was created with one.
    public let firstLeader: String?
    /// A number drawn when the group was created, so that a group re-created under the
    /// same id (a first leader whose disk was wiped, a job id submitted again) is another
    /// definition: replicas that hold the first one refuse it, instead of letting a second
    /// first leader lead term 1 with another log (review, issue 29 §1.7). Nil in groups
    /// made before it existed, and in groups whose id is never reused.
    public let creation: UInt64?

    /// Why a group definition is refused.
    public enum DefinitionError: Error, Hashable, CustomStringConvertible {
        case noReplicas
        case repeatedReplica(String)
        case emptyReplicaName
        case firstLeaderNotAReplica(String)

        public var description: String {
            switch self {
            case .noReplicas: "a Raft group needs at least one replica"
            case .repeatedReplica(let name): "replica '\(name)' is listed twice"
            case .emptyReplicaName: "a replica name is empty"
            case .firstLeaderNotAReplica(let name): "first leader '\(name)' is not one of the group's replicas"
            }
        }
    }

    public init(replicas: [String], firstLeader: String? = nil, creation: UInt64? = nil) throws(DefinitionError) {
        guard !replicas.isEmpty else { throw .noReplicas }
        let sorted = replicas.sorted()
        for (index, name) in sorted.enumerated() {
            if name.isEmpty { throw .emptyReplicaName }
            if index > 0, sorted[index - 1] == name { throw .repeatedReplica(name) }
        }
        if let firstLeader, !sorted.contains(firstLeader) { throw .firstLeaderNotAReplica(firstLeader) }
        self.replicas = sorted
        self.firstLeader = firstLeader
        self.creation = creation
    }

    private enum CodingKeys: String, CodingKey { case replicas, firstLeader, creation }

    /// Decodes through the same checks as `init(replicas:firstLeader:)`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let replicas = try container.decode([String].self, forKey: .replicas)
        let firstLeader = try container.decodeIfPresent(String.self, forKey: .firstLeader)
        let creation = try container.decodeIfPresent(UInt64.self, forKey: .creation)
        do {
            try self.init(replicas: replicas, firstLeader: firstLeader, creation: creation)
        } catch {
            throw DecodingError.dataCorruptedError(forKey: .replicas, in: container, debugDescription: error.description)
        }
    }

    /// How many replicas make a majority.
    public var quorum: Int { replicas.count / 2 + 1 }

    /// The vote every replica holds in `term` before it has voted: the first leader's in
    /// term 1, nobody's otherwise.
    func presetVote(in term: Int) -> String? { term == 1 ? firstLeader : nil }
}
