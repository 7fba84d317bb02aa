import SpokesConsensus

/// The safety properties of Raft (the paper's Figure 3) and of the replicated state
/// machine, checked as a simulated group runs, each at the event that could break it:
///
/// - **Election safety**: at most one leader per term, over the whole run (restarts
///   included).
/// - **One vote per term**: a replica never grants votes to two candidates in one term,
///   even across a crash (the vote must be durable before it is sent).
/// - **Leader append-only**: a leader never truncates its log.
/// - **Log matching**: every entry `(index, term)` written anywhere has the same
///   command and the same previous term; by induction, two logs with an entry in common
///   agree on everything before it.
/// - **Leader completeness**: a new leader holds every entry committed in an earlier
///   term. (Not every entry committed before it took office: a replica paused as a
///   candidate may count a vote of its term after a later term's leader committed more,
///   and lead its stale term, in which it can commit nothing.)
/// - **State machine safety**: replicas apply the same entry at each index, in index
///   order, each index once per lifetime; a snapshot equals the state the committed
///   entries up to it produce.
/// - **Durability**: after a crash (torn writes included), every committed entry is
///   still on the disks of a majority of the latest committed configuration (the
///   group's replicas, or those of the last configuration entry committed).
/// - Every command acknowledged to a client is in the committed log.
public struct RaftInvariants: Sendable {
    private struct VoteKey: Hashable, Sendable {
        var voter: String
        var term: Int
    }

    private struct Written: Hashable, Sendable {
        var command: String?
        var replicas: [String]?
        var previousTerm: Int?
    }

    /// A leader, when it took office.
    public struct Election: Sendable, Hashable {
        public var term: Int
        public var leader: String
        public var time: Double
    }

    /// A command acknowledged to a client.
    public struct Acknowledgement: Sendable, Hashable {
        public var command: String
        public var firstSent: Double
        public var time: Double
    }

    let group: RaftGroup
    public private(set) var violation: String?
    public private(set) var elections: [Election] = []
    public private(set) var acknowledgements: [Acknowledgement] = []
    /// The committed log, as replicas applied it.
    public private(set) var committed: [RaftEntry] = []
    /// The term in which each committed entry was committed: the term of the replica that
    /// applied it first (its leader, which applies an entry as it commits it).
    private var committedIn: [Int] = []

    private var committedCommands: Set<String> = []
    private var leaderOfTerm: [Int: String] = [:]
    private var written: [RaftLogPosition: Written] = [:]
    private var appliedIndex: [String: Int] = [:]
    private var votes: [VoteKey: String] = [:]

    init(group: RaftGroup) {
        self.group = group
    }

    private mutating func fail(_ message: String) {
        if violation == nil { violation = message }
    }

    mutating func storageFailed(_ node: String, _ error: RaftStorageError) {
        fail("\(node) cannot recover its storage: \(error)")
    }

    mutating func restarted(_ node: String) {
        appliedIndex[node] = 0
    }

    mutating func statusChanged(_ node: String, _ status: RaftStatus, replica: RaftReplica, now: Double) {
        guard status.role == .leader else { return }
        if let other = leaderOfTerm[status.term], other != node {
            return fail("election safety: \(other) and \(node) both led term \(status.term)")
        }
        if leaderOfTerm[status.term] == nil {
            leaderOfTerm[status.term] = node
            elections.append(Election(term: status.term, leader: node, time: now))
        }
        let snapshot = replica.snapshotPosition
        let required = committedIn.lastIndex { $0 < status.term }.map { $0 + 1 } ?? 0
        guard required <= replica.lastLogPosition.index else {
            return fail("leader completeness: \(node) leads term \(status.term) with \(replica.lastLogPosition.index) entries, but \(required) were committed in earlier terms")
        }
        if snapshot.index > 0, snapshot.index <= committed.count, committed[snapshot.index - 1].term != snapshot.term {
            return fail("leader completeness: \(node)'s snapshot ends at \(snapshot) but the committed entry there is of term \(committed[snapshot.index - 1].term)")
        }
        for entry in committed.prefix(required).dropFirst(snapshot.index) where replica.entry(at: entry.index) != entry {
            return fail("leader completeness: \(node) leads term \(status.term) without committed entry \(entry.index)@\(entry.term)")
        }
    }

    mutating func wrote(_ node: String, _ write: RaftWrite, replica: RaftReplica) {
        if replica.role == .leader, let after = write.truncateAfter {
            fail("leader append-only: leader \(node) truncated its log after \(after)")
        }
        for entry in write.entries {
            let key = RaftLogPosition(index: entry.index, term: entry.term)
            let facts = Written(command: entry.command, replicas: entry.replicas, previousTerm: replica.term(at: entry.index - 1))
            if let known = written[key] {
                if known != facts {
                    fail("log matching: \(node) wrote \(key) as \(facts) but it was written before as \(known)")
                }
            } else {
                written[key] = facts
            }
        }
    }

    mutating func sent(_ node: String, to receiver: String, _ message: RaftMessage) {
        guard case .requestVoteResponse(let response) = message, response.granted else { return }
        let key = VoteKey(voter: node, term: response.term)
        if let earlier = votes[key], earlier != receiver {
            fail("one vote per term: \(node) voted for \(earlier) and for \(receiver) in term \(response.term)")
        }
        votes[key] = receiver
    }

    /// `node`, in `term`, applied `entries`.
    mutating func applied(_ node: String, _ entries: [RaftEntry], term: Int) {
        for entry in entries {
            let expected = (appliedIndex[node] ?? 0) + 1
            guard entry.index == expected else {
                return fail("state machine safety: \(node) applied index \(entry.index) where \(expected) was next")
            }
            appliedIndex[node] = entry.index
            if entry.index <= committed.count {
                let chosen = committed[entry.index - 1]
                if chosen != entry {
                    return fail("state machine safety: \(node) applied \(entry) at \(entry.index) where \(chosen) was applied before")
                }
            } else if entry.index == committed.count + 1 {
                committed.append(entry)
                committedIn.append(term)
                if let command = entry.command { committedCommands.insert(command) }
            } else {
                return fail("state machine safety: \(node) applied \(entry.index) while only \(committed.count) were committed")
            }
        }
    }

    /// Checks the snapshot's position; its state is the model's to check (`snapshotDiffers`).
    mutating func appliedSnapshot(_ node: String, _ snapshot: RaftSnapshot) {
        appliedIndex[node] = snapshot.index
        guard snapshot.index <= committed.count, committed[snapshot.index - 1].term == snapshot.term else {
            return fail("state machine safety: \(node) applied a snapshot through \(snapshot.position) that is not the committed log's")
        }
    }

    /// `node`'s snapshot does not hold the state the committed entries up to it produce.
    mutating func snapshotDiffers(_ node: String, _ snapshot: RaftSnapshot) {
        fail("state machine safety: \(node)'s snapshot through \(snapshot.index) differs from the committed entries' state")
    }

    /// The replicas of the latest configuration committed (the group's until a change is).
    public var committedReplicas: [String] {
        committed.last { $0.replicas != nil }?.replicas ?? group.replicas
    }

    /// After `node` crashed: every committed entry must still be on the disks of a
    /// majority of the latest committed configuration (`disks` by replica).
    mutating func crashed(_ node: String, disks: [String: RaftDurableState]) {
        let replicas = committedReplicas
        let quorum = replicas.count / 2 + 1
        for entry in committed {
            let holders = replicas.compactMap { disks[$0] }.count { disk in
                if let snapshot = disk.snapshot, snapshot.index >= entry.index { return true }
                let base = disk.snapshot?.index ?? 0
                return entry.index > base && entry.index <= base + disk.entries.count && disk.entries[entry.index - base - 1] == entry
            }
            if holders < quorum {
                return fail("durability: after \(node) crashed, committed entry \(entry.index)@\(entry.term) is on \(holders) disks, fewer than a majority")
            }
        }
    }

    mutating func acknowledged(_ command: String, firstSent: Double, now: Double) {
        if !committedCommands.contains(command) {
            fail("client acknowledgement: \(command) was acknowledged but is not committed")
        }
        acknowledgements.append(Acknowledgement(command: command, firstSent: firstSent, time: now))
    }
}
