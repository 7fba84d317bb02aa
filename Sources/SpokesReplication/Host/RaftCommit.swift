import SpokesConsensus

/// A command committed by a majority and applied: where it stands in the group's log and
/// what the state machine returned for it.
public struct RaftCommit: Sendable, Hashable, Codable {
    public var group: String
    public var index: Int
    public var term: Int
    public var result: String

    public init(group: String, index: Int, term: Int, result: String) {
        self.group = group
        self.index = index
        self.term = term
        self.result = result
    }
}

/// A replica as its host sees it now.
public struct RaftGroupStatus: Sendable, Hashable, Codable, CustomStringConvertible {
    public var group: String
    public var replica: String
    public var role: RaftRole
    public var term: Int
    public var leader: String?
    /// The group's replicas now (its latest configuration), sorted.
    public var replicas: [String]
    /// Whether ``replicas`` is committed (no change of them is pending).
    public var replicasCommitted: Bool
    public var commitIndex: Int
    public var appliedIndex: Int
    public var lastIndex: Int
    /// The last index of the log on this replica's disk, where ``lastIndex`` may run ahead
    /// until its flush ends (a follower may even apply entries a majority holds before its
    /// own are durable): what a crash now keeps. Nil from nodes of releases that did not say.
    public var durableIndex: Int? = nil
    /// Why the replica stopped, if it did.
    public var failure: String?
    /// Where this replica leads: when it last heard from each other replica, on its
    /// node's clock (``RaftReplica/followersLastHeard``). Nil elsewhere, and from nodes of
    /// releases that did not say.
    public var followersLastHeard: [String: Double]? = nil

    public var description: String {
        "\(group)@\(replica): \(role.rawValue) t\(term) leader \(leader ?? "-") commit \(commitIndex) applied \(appliedIndex) last \(lastIndex)\(failure.map { " failed: \($0)" } ?? "")"
    }
}

/// What a forwarded proposal comes back with.
public enum RaftProposalOutcome: Sendable, Hashable, Codable {
    case committed(RaftCommit)
    case failed(RaftHostError)
}

/// Some messages of one group, as they travel between nodes.
public struct RaftEnvelope: Sendable, Hashable, Codable {
    public var group: String
    public var messages: [RaftMessage]

    public init(group: String, messages: [RaftMessage]) {
        self.group = group
        self.messages = messages
    }

    /// About the bytes this envelope costs on the wire, for `maximumCallBytes`.
    var approximateSize: Int {
        messages.reduce(group.utf8.count) { $0 + Self.approximateSize(of: $1) }
    }

    /// About how many bytes `message` takes on the wire.
    static func approximateSize(of message: RaftMessage) -> Int {
        switch message {
        case .appendEntries(let append): 96 + append.entries.reduce(0) { $0 + 32 + ($1.command?.utf8.count ?? 0) }
        case .installSnapshot(let install): 96 + install.snapshot.data.utf8.count
        default: 96
        }
    }
}
