/// One replica of one Raft group, as a pure state machine: observations in (time
/// passing, a message, a proposal, a flush done, a snapshot taken), actions out
/// (`RaftAction`: persist, send, apply, state changed). It does no I/O and reads no
/// clock: time comes in as `now` (seconds on any monotonic clock, only differences
/// matter) and randomness from a generator seeded by the caller and held inside, so a
/// replica is a value and a seed replays it exactly. `RaftAction` states the contract
/// its shell must keep.
///
/// What it implements (Raft, Ongaro & Ousterhout, and the thesis' extensions):
/// - leader election with randomized timeouts, preceded by **PreVote** (a replica asks
///   whether it could win before it raises its term, so a replica rejoining from a
///   partition cannot depose a healthy leader);
/// - the **leader lease** that goes with **CheckQuorum**: a leader that has not heard
///   from a majority in two windows in a row of the shortest election timeout steps down
///   (a cut-off leader stops accepting), and a replica that heard from its leader within
///   one such window refuses to help elect another;
/// - log replication with the consistency check, **fast back-off** (the refusal names
///   the conflicting term and its first index), **pipelining** (up to
///   `maxMessagesInFlight` AppendEntries per follower, each up to
///   `maxEntriesPerMessage` entries and about `maxBytesPerMessage` bytes);
/// - commitment by counting **only entries of the leader's own term** (§5.4.2; a new
///   leader appends a no-op to commit what came before it); the leader counts its own
///   log only up to what its storage acknowledged (`persisted`);
/// - **snapshots**: the application compacts the log (`compact`), a follower that needs
///   compacted entries gets InstallSnapshot;
/// - **bootstrap** with a designated first leader (`RaftGroup.firstLeader`);
/// - **leadership transfer** (TimeoutNow);
/// - single-replica groups, which elect themselves and commit on their own flush.
///
/// - **single-server membership changes** (thesis §4.1): a leader that has committed an
///   entry of its term, with no change pending, appends a configuration entry that adds
///   or removes one replica (`proposeReplicas`). Every replica uses the latest
///   configuration in its log, committed or not, and falls back to an earlier one if that
///   entry is truncated; a snapshot records the configuration it covers. A leader that
///   removed itself steps down once the change commits; a replica outside its
///   configuration never campaigns, and only its members' votes count.
///
/// Every input first starts the replica if `start(now:)` was not called: after a
/// restart from a snapshot, the first actions are `applySnapshot` and the state change.
public struct RaftReplica: Sendable {
    /// Why a replica cannot be constructed.
    public enum StartError: Error, Hashable, CustomStringConvertible {
        case notAReplica(String)
        case inconsistentState(String)

        public var description: String {
            switch self {
            case .notAReplica(let id): "'\(id)' is not one of the group's replicas"
            case .inconsistentState(let reason): "the durable state is inconsistent: \(reason)"
            }
        }
    }

    /// Why `compact` refused.
    public enum CompactionError: Error, Hashable, CustomStringConvertible {
        case notApplied(index: Int, applied: Int)

        public var description: String {
            switch self {
            case .notApplied(let index, let applied): "cannot snapshot through index \(index): only \(applied) applied"
            }
        }
    }

    private struct Transfer: Sendable, Hashable {
        var target: String
        var deadline: Double
    }

    public let id: String
    /// The group as it was created. Its replicas are the first configuration.
    public let group: RaftGroup
    public let configuration: RaftConfiguration
    /// The group's replicas now, sorted: the latest configuration entry in the log, or the
    /// snapshot's, or the group's first.
    public private(set) var replicas: [String]
    /// The index of the entry that set ``replicas`` (0: the snapshot's or the group's).
    private var configurationIndex = 0
    /// Whether ``replicas`` is committed (no change of them is pending).
    public var replicasCommitted: Bool { configurationIndex <= commitIndex }

    public private(set) var role: RaftRole = .follower
    public private(set) var term: Int
    public private(set) var votedFor: String?
    /// The leader this replica follows (itself when leading), if known.
    public private(set) var leader: String?
    /// For a leader: when it last heard from each follower (or began sending to it, if
    /// it has not heard from it since it leads). Empty unless leading.
    public var followersLastHeard: [String: Double] {
        role == .leader ? progress.mapValues(\.lastHeard) : [:]
    }
    /// The highest index known to be committed.
    public private(set) var commitIndex: Int
    /// The highest index handed to the application (`apply` or `applySnapshot`).
    public private(set) var appliedIndex: Int
    /// Entries up to this index (and the snapshot) are durable here.
    public private(set) var persistedIndex: Int

    private(set) var log: RaftLog
    private var snapshot: RaftSnapshot?
    /// A leader's snapshot arriving in chunks: what came so far, in order.
    private var incomingSnapshot: (position: RaftLogPosition, total: Int, data: [UInt8])?
    private var random: RaftRandom
    /// ``replicas`` but this one.
    private var peers: [String]

    private var started = false
    /// The time of the latest input.
    private var lastNow = 0.0
    private var electionDeadline = 0.0
    private var lastLeaderContact: Double?
    private var nextHeartbeat = 0.0
    private var nextQuorumCheck = 0.0
    /// CheckQuorum windows in a row in which a leader heard from no majority: it steps
    /// down after two. One quiet window was too little on a busy node: a follower whose
    /// threads were busy with a job for 0.7 s made its leader step down, and a job's
    /// coordinator lost its group for nothing.
    private var quietWindows = 0
    /// A stall of the shell's timers was forgiven (``timersResumed(now:)``) since the last
    /// quorum check or election timer reset.
    private var forgaveStall = false
    private var votes: Set<String> = []
    private var progress: [String: RaftProgress] = [:]
    private var transfer: Transfer?

    private var write = RaftWrite()
    private var outbox: [RaftAction] = []
    private var applies: [RaftAction] = []
    private var reported: RaftStatus?

    /// A replica of `group` named `id`, restarting from `state` (what its storage
    /// recovered; `.empty` for a new replica). `seed` drives its election timeouts:
    /// give each replica and each incarnation its own.
    public init(id: String, group: RaftGroup, state: RaftDurableState = .empty, configuration: RaftConfiguration = RaftConfiguration(), seed: UInt64) throws(StartError) {
        guard group.replicas.contains(id) else { throw .notAReplica(id) }
        let base = state.snapshot?.position ?? RaftLogPosition(index: 0, term: 0)
        var previousTerm = base.term
        for (offset, entry) in state.entries.enumerated() {
            guard entry.index == base.index + offset + 1 else { throw .inconsistentState("entry \(entry.index) where \(base.index + offset + 1) was expected") }
            guard entry.term >= previousTerm else { throw .inconsistentState("entry \(entry.index) has term \(entry.term) after term \(previousTerm)") }
            previousTerm = entry.term
        }
        var hardState = state.hardState
        if hardState.term == 0, group.firstLeader != nil {
            hardState = RaftHardState(term: 1, votedFor: group.firstLeader)
        }
        guard hardState.term >= previousTerm else {
            throw .inconsistentState("term \(hardState.term) is older than the log's last term \(previousTerm)")
        }
        self.id = id
        self.group = group
        self.configuration = configuration
        self.term = hardState.term
        self.votedFor = hardState.votedFor
        self.log = RaftLog(snapshot: base, entries: state.entries)
        self.snapshot = state.snapshot
        self.commitIndex = base.index
        self.appliedIndex = base.index
        self.persistedIndex = base.index + state.entries.count
        self.random = RaftRandom(seed: seed)
        self.replicas = group.replicas
        self.peers = group.replicas.filter { $0 != id }
        adoptConfiguration(replicaSet(through: log.lastIndex))
    }

    // MARK: - Reading

    public var status: RaftStatus { RaftStatus(role: role, term: term, leader: leader) }
    public var lastLogPosition: RaftLogPosition { log.last }
    /// The position the latest snapshot covers (0/0 without one).
    public var snapshotPosition: RaftLogPosition { log.snapshot }
    public func term(at index: Int) -> Int? { log.term(at: index) }
    public func entry(at index: Int) -> RaftEntry? { log.entry(at: index) }

    /// The earliest time at which `tick` has something to do: the shell may sleep until
    /// then unless another input arrives.
    public var nextDeadline: Double {
        guard role == .leader else { return electionDeadline }
        return min(nextHeartbeat, nextQuorumCheck, transfer?.deadline ?? .infinity)
    }

    // MARK: - Inputs

    /// Starts the replica (any other input does it too): after a restart from a
    /// snapshot, hands it to the application; the designated first leader of a new group
    /// starts leading term 1; a single replica elects itself.
    public mutating func start(now: Double) -> [RaftAction] {
        begin(now)
        return finish()
    }

    /// Time passed: election timeout, heartbeats, CheckQuorum, an expired transfer.
    public mutating func tick(now: Double) -> [RaftAction] {
        begin(now)
        switch role {
        case .leader:
            if let transfer, now >= transfer.deadline { self.transfer = nil }
            if now >= nextQuorumCheck {
                let active = (replicas.contains(id) ? 1 : 0) + peers.count { progress[$0]?.active == true }
                quietWindows = active < quorum ? quietWindows + 1 : 0
                if quietWindows >= 2 {
                    becomeFollower(term: term, leader: nil, now: now)
                    return finish()
                }
                for peer in peers { progress[peer]?.active = false }
                nextQuorumCheck = now + configuration.electionTimeout.lowerBound
                forgaveStall = false
            }
            if now >= nextHeartbeat {
                nextHeartbeat = now + configuration.heartbeatInterval
                for peer in peers {
                    send(peer, .heartbeat(RaftHeartbeat(term: term, commit: min(commitIndex, progress[peer]?.match ?? 0))))
                }
            }
        case .follower, .preCandidate, .candidate:
            if now >= electionDeadline { startPreVote(now: now) }
        }
        return finish()
    }

    /// The shell's timers stalled until `now` (the process was paused, or its threads were
    /// starved): the silence it measured across the stall says nothing of the peers, whose
    /// messages may be waiting to be read. A leader gives them a fresh CheckQuorum window
    /// before it counts them; a follower or candidate starts a fresh election timeout.
    /// Without it, a busy node's leader stepped down after a 0.7 s stall, and re-won its own
    /// group: a take-over for nothing. Safety does not depend on it (a cut-off leader
    /// commits nothing, whenever it steps down); a leader that stays cut off steps down
    /// one window later. It forgives one stall at a time: a node whose timers keep
    /// stalling still steps down, or campaigns, once a window or timeout passes with no
    /// stall forgiven in it.
    public mutating func timersResumed(now: Double) -> [RaftAction] {
        begin(now)
        guard !forgaveStall else { return finish() }
        switch role {
        case .leader:
            nextQuorumCheck = max(nextQuorumCheck, now + configuration.electionTimeout.lowerBound)
        case .follower, .preCandidate, .candidate:
            resetElectionTimer(now: now)
        }
        forgaveStall = true
        return finish()
    }

    /// A message from another replica of the group; ill-formed ones are ignored. Replicas
    /// outside this one's configuration are heard too (Raft thesis §4.2): a leader, by a
    /// replica whose configuration is stale (added again, or holding a change a later
    /// leader truncates), which learns the current one only from it; and a candidate,
    /// whose configuration may be newer than this replica's (it may need this vote, and
    /// refusing it deadlocked groups in the simulator). A removed replica cannot disturb
    /// the group: its log lacks the change that removed it, and the leader lease refuses
    /// its campaign while a leader is heard. Only the configuration's votes count.
    public mutating func receive(_ message: RaftMessage, from sender: String, now: Double) -> [RaftAction] {
        begin(now)
        guard sender != id, message.isWellFormed else { return finish() }
        if message.term > term {
            switch message {
            case .preVote:
                break
            case .preVoteResponse(let response) where response.granted:
                break
            case .requestVote(let request) where !request.transfer && inLease(now: now):
                return finish()
            case .appendEntries, .heartbeat, .installSnapshot:
                becomeFollower(term: message.term, leader: sender, now: now)
            default:
                becomeFollower(term: message.term, leader: nil, now: now)
            }
        } else if message.term < term {
            switch message {
            case .appendEntries, .installSnapshot:
                // Not a refusal (as etcd answers): the sender learns the newer term and
                // steps down. Should it lead this term by the time the answer arrives, a
                // refusal naming its old append would send it probing for nothing; an
                // acknowledgement of index 0 tells it nothing it did not know.
                send(sender, .appendEntriesResponse(.accepted(term: term, matchIndex: 0)))
            case .heartbeat:
                send(sender, .heartbeatResponse(RaftHeartbeatResponse(term: term)))
            case .preVote:
                send(sender, .preVoteResponse(RaftVoteResponse(term: term, granted: false)))
            case .requestVote:
                send(sender, .requestVoteResponse(RaftVoteResponse(term: term, granted: false)))
            default:
                break
            }
            return finish()
        }
        switch message {
        case .preVote(let request):
            let grant = request.term > term && !inLease(now: now) && request.last >= log.last
            send(sender, .preVoteResponse(RaftVoteResponse(term: grant ? request.term : term, granted: grant)))
        case .preVoteResponse(let response):
            // Only the configuration's votes count toward its majority.
            if role == .preCandidate, response.granted, response.term == term + 1, replicas.contains(sender) {
                votes.insert(sender)
                if votes.count >= quorum { campaign(now: now, transfer: false) }
            }
        case .requestVote(let request):
            let grant = (votedFor == nil || votedFor == sender) && request.last >= log.last
            if grant {
                votedFor = sender
                write.hardState = hardState
                resetElectionTimer(now: now)
            }
            send(sender, .requestVoteResponse(RaftVoteResponse(term: term, granted: grant)))
        case .requestVoteResponse(let response):
            if role == .candidate, response.granted, replicas.contains(sender) {
                votes.insert(sender)
                if votes.count >= quorum { becomeLeader(now: now) }
            }
        case .appendEntries(let append):
            if follow(sender, now: now) { handleAppend(append, from: sender) }
        case .heartbeat(let heartbeat):
            if follow(sender, now: now) {
                advanceCommit(to: min(heartbeat.commit, log.lastIndex))
                send(sender, .heartbeatResponse(RaftHeartbeatResponse(term: term)))
            }
        case .installSnapshot(let install):
            if follow(sender, now: now) { receiveSnapshot(install, from: sender) }
        case .appendEntriesResponse(let response):
            if role == .leader { handleAppendResponse(response, from: sender, now: now) }
        case .heartbeatResponse:
            if role == .leader { handleHeartbeatResponse(from: sender, now: now) }
        case .timeoutNow:
            if role == .follower, leader == sender { campaign(now: now, transfer: true) }
        }
        return finish()
    }

    /// Appends `commands` if this replica is an accepting leader, and starts replicating
    /// them. See `RaftProposal` for how a caller learns they committed.
    public mutating func propose(_ commands: [String], now: Double) -> (RaftProposal, [RaftAction]) {
        begin(now)
        guard role == .leader, transfer == nil else {
            return (.notLeader(leaderHint: role == .leader ? transfer?.target : leader), finish())
        }
        let first = log.lastIndex + 1
        appendLocal(commands)
        for peer in peers { sendAppends(to: peer, now: now) }
        maybeCommit()
        return (.accepted(term: term, indices: first..<(first + commands.count)), finish())
    }

    /// Why ``proposeReplicas(_:now:)`` refused a change.
    public enum ConfigurationChangeError: Error, Hashable, CustomStringConvertible {
        case notOneChange(from: [String], to: [String])
        case changePending(index: Int)
        case termNotCommitted(term: Int)

        public var description: String {
            switch self {
            case .notOneChange(let from, let to):
                "replicas \(to) are not \(from) with one replica added or removed"
            case .changePending(let index): "the change at index \(index) has not committed yet"
            case .termNotCommitted(let term): "this leader has not committed an entry of its term \(term) yet"
            }
        }
    }

    /// Appends a configuration entry that makes `newReplicas` the group's replicas (one
    /// added or removed), if this replica is an accepting leader with no change pending
    /// and an entry of its term committed (so no change of an earlier leader can still
    /// commit beside this one). The new configuration applies at once; a new replica
    /// catches up from the leader's log or snapshot. Learn that it committed as for
    /// ``propose(_:now:)``.
    public mutating func proposeReplicas(_ newReplicas: [String], now: Double) throws(ConfigurationChangeError) -> (RaftProposal, [RaftAction]) {
        begin(now)
        guard role == .leader, transfer == nil else {
            return (.notLeader(leaderHint: role == .leader ? transfer?.target : leader), finish())
        }
        let sorted = Array(Set(newReplicas)).sorted()
        guard RaftMessage.isConfiguration(sorted), Set(sorted).symmetricDifference(replicas).count == 1 else {
            throw .notOneChange(from: replicas, to: sorted)
        }
        guard log.term(at: commitIndex) == term else { throw .termNotCommitted(term: term) }
        guard configurationIndex <= commitIndex else { throw .changePending(index: configurationIndex) }
        let index = log.lastIndex + 1
        let entry = RaftEntry(index: index, term: term, command: nil, replicas: sorted)
        log.append([entry])
        write.entries.append(entry)
        adoptConfiguration((sorted, index), now: now)
        for peer in peers { sendAppends(to: peer, now: now) }
        maybeCommit()
        return (.accepted(term: term, indices: index..<(index + 1)), finish())
    }

    /// The storage made everything up to the entry at `index` with `term` durable (the
    /// shell's flush finished). Ignored when the log no longer holds that entry (it was
    /// truncated and replaced since the write was issued).
    public mutating func persisted(through index: Int, term entryTerm: Int, now: Double) -> [RaftAction] {
        begin(now)
        if index > persistedIndex, log.term(at: index) == entryTerm {
            persistedIndex = index
            maybeCommit()
        }
        return finish()
    }

    /// The application's state as of `index` (at most `appliedIndex`) replaces the log
    /// up to there: returns the `persist` of the snapshot. Later, followers that need the
    /// compacted entries get the snapshot instead.
    public mutating func compact(through index: Int, snapshot data: String) throws(CompactionError) -> [RaftAction] {
        guard index <= appliedIndex else { throw .notApplied(index: index, applied: appliedIndex) }
        guard index > log.snapshot.index, let snapshotTerm = log.term(at: index) else { return finish() }
        let covered = replicaSet(through: index).replicas
        let taken = RaftSnapshot(index: index, term: snapshotTerm, data: data, replicas: covered == group.replicas ? nil : covered)
        log.compact(through: taken.position)
        snapshot = taken
        write.snapshot = taken
        return finish()
    }

    /// Hands leadership to `target`: stops accepting proposals, brings the target up to
    /// date, then tells it to campaign at once (TimeoutNow). Abandoned after the longest
    /// election timeout if the target has not taken over.
    public mutating func transferLeadership(to target: String, now: Double) -> [RaftAction] {
        begin(now)
        guard role == .leader, target != id, progress[target] != nil else { return finish() }
        transfer = Transfer(target: target, deadline: now + configuration.electionTimeout.upperBound)
        progress[target]?.timeoutNowSent = false
        sendTimeoutNowIfReady(target)
        sendAppends(to: target, now: now)
        return finish()
    }

    // MARK: - Roles

    private var hardState: RaftHardState { RaftHardState(term: term, votedFor: votedFor) }

    private mutating func begin(_ now: Double) {
        lastNow = now
        guard !started else { return }
        started = true
        if let snapshot { applies.append(.applySnapshot(snapshot)) }
        if group.firstLeader == id, term == 1, votedFor == id, log.lastIndex == 0 {
            becomeLeader(now: now)
        } else if replicas == [id] {
            campaign(now: now, transfer: false)
        } else {
            // A new group's replica takes its designated first leader for the leader of
            // term 1, with a lease (that leader is starting too). A replica restarted with
            // a log has heard from nobody yet: it names no leader, itself least of all,
            // and grants no lease.
            let fresh = term == 1 && log.lastIndex == 0 && snapshot == nil
            leader = fresh && group.firstLeader != id ? group.firstLeader : nil
            lastLeaderContact = leader == nil ? nil : now
            resetElectionTimer(now: now)
        }
    }

    private mutating func resetElectionTimer(now: Double) {
        forgaveStall = false
        electionDeadline = now + random.uniform(in: configuration.electionTimeout)
    }

    /// Whether this replica still trusts a leader (itself included) it heard from within
    /// the shortest election timeout; then it refuses votes that would depose it.
    private func inLease(now: Double) -> Bool {
        if role == .leader { return true }
        guard leader != nil, let lastLeaderContact else { return false }
        return now - lastLeaderContact < configuration.electionTimeout.lowerBound
    }

    private mutating func becomeFollower(term newTerm: Int, leader newLeader: String?, now: Double) {
        if newTerm > term {
            term = newTerm
            votedFor = group.presetVote(in: newTerm)
            write.hardState = hardState
        }
        role = .follower
        leader = newLeader
        if newLeader != nil { lastLeaderContact = now }
        votes = []
        progress = [:]
        transfer = nil
        resetElectionTimer(now: now)
    }

    /// A message of the current term from the leader: follow it.
    private mutating func follow(_ sender: String, now: Double) -> Bool {
        guard role != .leader else { return false }
        if role != .follower { becomeFollower(term: term, leader: sender, now: now) }
        leader = sender
        lastLeaderContact = now
        resetElectionTimer(now: now)
        return true
    }

    private mutating func startPreVote(now: Double) {
        // Outside its configuration (removed, or added and not yet told so) a replica
        // never campaigns: it would only disturb the replicas that are in it.
        guard replicas.contains(id) else { return resetElectionTimer(now: now) }
        role = .preCandidate
        leader = nil
        votes = [id]
        resetElectionTimer(now: now)
        if votes.count >= quorum { return campaign(now: now, transfer: false) }
        for peer in peers { send(peer, .preVote(RaftVoteRequest(term: term + 1, last: log.last))) }
    }

    private mutating func campaign(now: Double, transfer: Bool) {
        guard replicas.contains(id) else { return resetElectionTimer(now: now) }
        role = .candidate
        term += 1
        votedFor = id
        write.hardState = hardState
        leader = nil
        votes = [id]
        resetElectionTimer(now: now)
        if votes.count >= quorum { return becomeLeader(now: now) }
        for peer in peers { send(peer, .requestVote(RaftVoteRequest(term: term, last: log.last, transfer: transfer))) }
    }

    private mutating func becomeLeader(now: Double) {
        role = .leader
        leader = id
        votes = []
        transfer = nil
        progress = Dictionary(uniqueKeysWithValues: peers.map { ($0, RaftProgress(next: log.lastIndex + 1, heardAt: now)) })
        nextHeartbeat = now + configuration.heartbeatInterval
        nextQuorumCheck = now + configuration.electionTimeout.lowerBound
        quietWindows = 0
        appendLocal([nil])
        for peer in peers { sendAppends(to: peer, now: now) }
        maybeCommit()
    }

    // MARK: - Follower side

    private mutating func handleAppend(_ append: RaftAppendEntries, from sender: String) {
        let lastNew = append.previous.index + append.entries.count
        if lastNew <= commitIndex {
            // Everything here is committed, so it is in this leader's log as in ours.
            return send(sender, .appendEntriesResponse(.accepted(term: term, matchIndex: commitIndex)))
        }
        var previous = append.previous
        var entries = append.entries[...]
        if previous.index < commitIndex {
            let skip = commitIndex - previous.index
            previous = RaftLogPosition(index: commitIndex, term: entries[entries.startIndex + skip - 1].term)
            entries = entries.dropFirst(skip)
        }
        guard log.term(at: previous.index) == previous.term else {
            var refusal = RaftAppendEntriesResponse(term: term, success: false, rejectedIndex: append.previous.index)
            if previous.index > log.lastIndex {
                refusal.conflictIndex = log.lastIndex + 1
            } else {
                refusal.conflictTerm = log.term(at: previous.index)
                refusal.conflictIndex = max(log.firstIndex(ofTermAt: previous.index), commitIndex + 1)
            }
            return send(sender, .appendEntriesResponse(refusal))
        }
        if let firstNew = entries.firstIndex(where: { log.term(at: $0.index) != $0.term }) {
            let start = entries[firstNew].index
            if start <= log.lastIndex {
                log.truncate(after: start - 1)
                write.truncate(after: start - 1)
                persistedIndex = min(persistedIndex, start - 1)
            }
            log.append(entries[firstNew...])
            write.entries.append(contentsOf: entries[firstNew...])
            if start <= configurationIndex || entries[firstNew...].contains(where: { $0.replicas != nil }) {
                adoptConfiguration(replicaSet(through: log.lastIndex))
            }
        }
        advanceCommit(to: min(append.commit, lastNew))
        send(sender, .appendEntriesResponse(.accepted(term: term, matchIndex: lastNew)))
    }

    /// A snapshot, or one chunk of it: chunks are gathered in order (a chunk out of order,
    /// or of another snapshot, drops what was gathered: the leader sends the whole
    /// snapshot again once it hears nothing back), and the last one installs it.
    private mutating func receiveSnapshot(_ install: RaftInstallSnapshot, from sender: String) {
        guard let total = install.total else { return handleSnapshot(install.snapshot, from: sender) }
        guard total <= configuration.maxSnapshotBytes else {
            incomingSnapshot = nil
            return
        }
        let chunk = Array(install.snapshot.data.utf8)
        if install.offset == 0 {
            incomingSnapshot = (install.snapshot.position, total, chunk)
        } else if var incoming = incomingSnapshot, incoming.position == install.snapshot.position, incoming.total == total,
                  incoming.data.count == install.offset {
            incomingSnapshot = nil
            incoming.data += chunk
            incomingSnapshot = incoming
        } else {
            incomingSnapshot = nil
            return
        }
        guard let incoming = incomingSnapshot, incoming.data.count >= incoming.total else { return }
        incomingSnapshot = nil
        guard incoming.data.count == incoming.total else { return }
        let data = String(decoding: incoming.data, as: UTF8.self)
        handleSnapshot(RaftSnapshot(index: incoming.position.index, term: incoming.position.term, data: data), from: sender)
    }

    private mutating func handleSnapshot(_ offered: RaftSnapshot, from sender: String) {
        guard offered.index > commitIndex else {
            return send(sender, .appendEntriesResponse(.accepted(term: term, matchIndex: commitIndex)))
        }
        let kept = log.term(at: offered.index) == offered.term
        log.compact(through: offered.position)
        if !kept { persistedIndex = min(persistedIndex, offered.index - 1) }
        snapshot = offered
        write.snapshot = offered
        commitIndex = offered.index
        appliedIndex = offered.index
        applies.append(.applySnapshot(offered))
        adoptConfiguration(replicaSet(through: log.lastIndex))
        send(sender, .appendEntriesResponse(.accepted(term: term, matchIndex: offered.index)))
    }

    private mutating func advanceCommit(to index: Int) {
        if index > commitIndex { commitIndex = index }
    }

    // MARK: - Leader side

    private mutating func appendLocal(_ commands: [String?]) {
        let first = log.lastIndex + 1
        let entries = commands.enumerated().map { RaftEntry(index: first + $0.offset, term: term, command: $0.element) }
        log.append(entries)
        write.entries.append(contentsOf: entries)
    }

    private mutating func handleAppendResponse(_ response: RaftAppendEntriesResponse, from sender: String, now: Double) {
        guard var peer = progress[sender] else { return }
        peer.active = true
        peer.lastHeard = now
        if response.success {
            guard response.matchIndex <= log.lastIndex else { return progress[sender] = peer }
            peer.matched(response.matchIndex)
            progress[sender] = peer
            maybeCommit()
            sendTimeoutNowIfReady(sender)
            return sendAppends(to: sender, now: now)
        }
        let stale: Bool = switch peer.mode {
        case .probe: response.rejectedIndex != peer.next - 1
        case .replicate: false
        case .snapshot: true
        }
        guard !stale, response.rejectedIndex > peer.match else { return progress[sender] = peer }
        var next = response.conflictIndex
        if let conflictTerm = response.conflictTerm, let found = log.lastIndex(ofTerm: conflictTerm, atOrBelow: response.rejectedIndex) {
            next = found + 1
        }
        peer.probe(from: min(max(next, 1), response.rejectedIndex))
        progress[sender] = peer
        sendAppends(to: sender, now: now)
    }

    private mutating func handleHeartbeatResponse(from sender: String, now: Double) {
        guard var peer = progress[sender] else { return }
        peer.active = true
        peer.lastHeard = now
        switch peer.mode {
        case .probe:
            peer.probeSent = false
        case .replicate:
            if peer.inFlight.count >= configuration.maxMessagesInFlight { peer.inFlight.removeFirst() }
        case .snapshot(_, let sentAt):
            if now - sentAt >= configuration.electionTimeout.lowerBound { peer.probe(from: peer.match + 1) }
        }
        progress[sender] = peer
        if peer.match < log.lastIndex { _ = sendAppend(to: sender, now: now, allowEmpty: true) }
    }

    /// Sends as much as the follower's mode and window allow.
    private mutating func sendAppends(to peer: String, now: Double) {
        while sendAppend(to: peer, now: now, allowEmpty: false) {}
    }

    /// Sends one AppendEntries (or the snapshot) to `peer` if its mode allows; returns
    /// whether another could follow at once (pipelining).
    private mutating func sendAppend(to peerName: String, now: Double, allowEmpty: Bool) -> Bool {
        guard var peer = progress[peerName] else { return false }
        switch peer.mode {
        case .snapshot: return false
        case .probe: if peer.probeSent { return false }
        case .replicate: if peer.inFlight.count >= configuration.maxMessagesInFlight { return false }
        }
        let previousIndex = peer.next - 1
        guard let previousTerm = log.term(at: previousIndex) else {
            guard let snapshot else { return false }
            for chunk in RaftInstallSnapshot.chunks(of: snapshot, term: term, chunkBytes: configuration.maxSnapshotChunkBytes) {
                send(peerName, .installSnapshot(chunk))
            }
            peer.mode = .snapshot(index: snapshot.index, sentAt: now)
            progress[peerName] = peer
            return false
        }
        let batch = log.batch(from: peer.next, maxCount: configuration.maxEntriesPerMessage, maxBytes: configuration.maxBytesPerMessage)
        if batch.isEmpty, !allowEmpty, peer.mode == .replicate { return false }
        let previous = RaftLogPosition(index: previousIndex, term: previousTerm)
        send(peerName, .appendEntries(RaftAppendEntries(term: term, previous: previous, entries: batch, commit: commitIndex)))
        if peer.mode == .probe {
            peer.probeSent = true
        } else if let last = batch.last {
            peer.next = last.index + 1
            peer.inFlight.append(last.index)
        }
        progress[peerName] = peer
        return peer.mode == .replicate && !batch.isEmpty
    }

    /// Raft §5.4.2: commit the highest index a majority holds durably, only if its
    /// entry is of this term (earlier terms' entries commit with it, never by counting).
    private mutating func maybeCommit() {
        guard role == .leader else { return }
        var matches = peers.map { progress[$0]?.match ?? 0 }
        if replicas.contains(id) { matches.append(min(persistedIndex, log.lastIndex)) }
        matches.sort(by: >)
        let candidate = matches[quorum - 1]
        if candidate > commitIndex, log.term(at: candidate) == term { commitIndex = candidate }
        // A leader that removed itself leads until the change commits, then steps down.
        if !replicas.contains(id), commitIndex >= configurationIndex {
            becomeFollower(term: term, leader: nil, now: lastNow)
        }
    }

    /// How many replicas make a majority of the configuration now.
    private var quorum: Int { replicas.count / 2 + 1 }

    /// The configuration in effect at `index`, and the index of the entry that set it (0
    /// for the snapshot's or the group's first).
    private func replicaSet(through index: Int) -> (replicas: [String], index: Int) {
        var at = min(index, log.lastIndex)
        while at > log.snapshot.index {
            if let replicas = log.entry(at: at)?.replicas { return (replicas, at) }
            at -= 1
        }
        return (snapshot?.replicas ?? group.replicas, 0)
    }

    /// Makes `new` the configuration: a leader starts replicating to an added replica
    /// and forgets a removed one.
    private mutating func adoptConfiguration(_ new: (replicas: [String], index: Int), now: Double? = nil) {
        configurationIndex = new.index
        guard new.replicas != replicas else { return }
        replicas = new.replicas
        peers = replicas.filter { $0 != id }
        guard role == .leader else { return }
        // Only a leader's own proposal changes its replicas, and it passes its time.
        for peer in peers where progress[peer] == nil { progress[peer] = RaftProgress(next: log.lastIndex + 1, heardAt: now ?? 0) }
        for name in progress.keys where !peers.contains(name) { progress[name] = nil }
        if let transfer, !peers.contains(transfer.target) { self.transfer = nil }
    }

    private mutating func sendTimeoutNowIfReady(_ peerName: String) {
        guard let transfer, transfer.target == peerName, var peer = progress[peerName],
              !peer.timeoutNowSent, peer.match == log.lastIndex else { return }
        peer.timeoutNowSent = true
        progress[peerName] = peer
        send(peerName, .timeoutNow(RaftTimeoutNow(term: term)))
    }

    // MARK: - Output

    private mutating func send(_ peer: String, _ message: RaftMessage) {
        outbox.append(.send(to: peer, message))
    }

    /// Collects this input's actions: the write, the sends, what became committed, and a
    /// state change.
    private mutating func finish() -> [RaftAction] {
        if commitIndex > appliedIndex {
            applies.append(.apply(Array(log.entries(from: appliedIndex + 1, through: commitIndex))))
            appliedIndex = commitIndex
        }
        var actions: [RaftAction] = []
        actions.reserveCapacity(outbox.count + applies.count + 2)
        if !write.isEmpty {
            actions.append(.persist(write))
            write = RaftWrite()
        }
        actions.append(contentsOf: outbox)
        actions.append(contentsOf: applies)
        outbox.removeAll(keepingCapacity: true)
        applies.removeAll(keepingCapacity: true)
        if started, status != reported {
            reported = status
            actions.append(.stateChanged(status))
        }
        return actions
    }
}
