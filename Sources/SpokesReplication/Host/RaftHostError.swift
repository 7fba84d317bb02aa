/// Why a `RaftHost` refused or could not finish something. Codable: a proposal forwarded
/// to the leader's node comes back with the leader's error.
public enum RaftHostError: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// A group id must name a directory: 1 to `RaftGroupID.maximumLength` characters of
    /// `A-Z a-z 0-9 . _ -`, not starting with a dot.
    case invalidGroupID(String, reason: String)
    case unknownGroup(String, node: String)
    case groupExists(String, node: String)
    case notAReplica(group: String, node: String)
    /// The group's directory holds a group created with other replicas or another first
    /// leader: its log only makes sense under that definition.
    case definitionChanged(group: String, node: String, stored: String, given: String)
    /// This replica does not lead the group; `leader` is the replica it believes leads,
    /// if it knows one (none during an election).
    case notLeader(group: String, node: String, leader: String?)
    /// The leader that took the command lost its leadership before committing it, and
    /// the new leader put another entry at its index: the command was not applied.
    /// Propose it again.
    case lostInLeaderChange(group: String, index: Int)
    /// The command was appended but whether it commits is not known (the wait timed out,
    /// or a snapshot replaced the log around it). Propose it again only if commands are
    /// idempotent.
    case outcomeUnknown(group: String, index: Int, reason: String)
    /// The group's storage failed or its state machine refused a snapshot: the replica
    /// stopped, as it must once it cannot know what is on disk.
    case replicaFailed(group: String, node: String, reason: String)
    /// The leader's node could not be reached to forward a proposal.
    case leaderUnreachable(group: String, leader: String, reason: String)
    case stopped(node: String)
    /// A change of the group's replicas that its leader refused (one change at a time).
    case changeRefused(group: String, reason: String)

    public var description: String {
        switch self {
        case .invalidGroupID(let id, let reason): "invalid Raft group id '\(id)': \(reason)"
        case .unknownGroup(let id, let node): "\(node) holds no replica of group '\(id)'"
        case .groupExists(let id, let node): "\(node) already holds a replica of group '\(id)'"
        case .notAReplica(let id, let node): "\(node) is not one of the replicas of group '\(id)'"
        case .definitionChanged(let id, let node, let stored, let given):
            "group '\(id)' on \(node) was created as \(stored), not \(given): a group's replicas never change"
        case .notLeader(let id, let node, let leader?): "\(node) is not the leader of group '\(id)': \(leader) is"
        case .notLeader(let id, let node, nil): "\(node) is not the leader of group '\(id)' and knows no leader now (an election is under way): try again"
        case .lostInLeaderChange(let id, let index): "group '\(id)': the command at index \(index) was lost in a change of leader: propose it again"
        case .outcomeUnknown(let id, let index, let reason): "group '\(id)': the command at index \(index) may or may not be committed: \(reason)"
        case .replicaFailed(let id, let node, let reason): "the replica of group '\(id)' on \(node) stopped: \(reason)"
        case .leaderUnreachable(let id, let leader, let reason): "cannot reach \(leader), the leader of group '\(id)': \(reason)"
        case .stopped(let node): "the Raft host of \(node) is stopped"
        case .changeRefused(let id, let reason): "group '\(id)' cannot change its replicas now: \(reason)"
        }
    }
}

/// Group ids name directories, so they are checked before use.
public enum RaftGroupID {
    public static let maximumLength = 128

    /// Throws `invalidGroupID` naming what is wrong with `id`.
    public static func validate(_ id: String) throws(RaftHostError) {
        guard !id.isEmpty else { throw .invalidGroupID(id, reason: "it is empty") }
        guard id.utf8.count <= maximumLength else { throw .invalidGroupID(id, reason: "longer than \(maximumLength) characters") }
        guard !id.hasPrefix(".") else { throw .invalidGroupID(id, reason: "it starts with a dot") }
        if let bad = id.unicodeScalars.first(where: { !($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "._-".unicodeScalars.contains($0))) }) {
            throw .invalidGroupID(id, reason: "'\(bad)' is not a letter, digit, '.', '_' or '-'")
        }
    }
}
