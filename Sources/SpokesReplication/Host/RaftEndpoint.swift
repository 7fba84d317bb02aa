import Distributed
import SpokesCluster
import SpokesConsensus

/// Every node's well-known Raft actor (name `raft`): how replicas of a group on
/// different nodes reach each other. Calls come over the cluster's connections, so they
/// are authenticated like every call (a cluster with a secret takes them only from
/// holders of the secret); a replica takes a group's messages only from that group's
/// other replicas, by name.
public distributed actor RaftEndpoint {
    public typealias ActorSystem = ClusterSystem

    /// The well-known name under which every node hosts its Raft endpoint.
    public static let wellKnownName = "raft"

    private let delivery: @Sendable ([RaftEnvelope], String) async -> Void
    private let proposal: @Sendable (String, String) async -> RaftProposalOutcome
    private let opening: @Sendable (String, RaftGroup) async -> String?
    private let removal: @Sendable (String) -> Bool
    private let leading: @Sendable (String) async -> [String]?

    init(
        actorSystem: ClusterSystem, deliver: @escaping @Sendable ([RaftEnvelope], String) async -> Void,
        propose: @escaping @Sendable (String, String) async -> RaftProposalOutcome,
        removed: @escaping @Sendable (String) -> Bool,
        open: @escaping @Sendable (String, RaftGroup) async -> String?,
        leaderReplicas: @escaping @Sendable (String) async -> [String]?
    ) {
        self.actorSystem = actorSystem
        delivery = deliver
        proposal = propose
        opening = open
        removal = removed
        leading = leaderReplicas
    }

    /// Hands messages from replica `sender` to this node's replicas of their groups;
    /// messages for groups this node does not hold are dropped.
    public distributed func deliver(_ envelopes: [RaftEnvelope], from sender: String) async {
        await delivery(envelopes, sender)
    }

    /// Opens this node's replica of group `id` as another replica asks (its state machine
    /// comes from the host's factory for the id's kind, `taskjob-...`); a replica already
    /// open is fine. Returns nil when it is open, else why not.
    public distributed func openGroup(_ id: String, definition: RaftGroup) async -> String? {
        await opening(id, definition)
    }

    /// Whether this node removed its replica of `group` since it started: the group's
    /// work is done (a job group is removed only once its report is stored, or its job was
    /// refused). A replica that was away when that happened asks, and removes its own.
    public distributed func removed(group: String) -> Bool {
        removal(group)
    }

    /// The replicas of `group` if this node's replica leads it and they are committed;
    /// nil otherwise. A replica whose node was dead while the group replaced it asks,
    /// and removes its own once such a leader no longer names it.
    public distributed func leaderReplicas(of group: String) async -> [String]? {
        await leading(group)
    }

    /// Proposes `command` to this node's replica of `group`, which must lead it (a
    /// forwarded proposal is not forwarded again), and waits for commit and apply.
    public distributed func propose(group: String, command: String) async -> RaftProposalOutcome {
        await proposal(group, command)
    }
}
