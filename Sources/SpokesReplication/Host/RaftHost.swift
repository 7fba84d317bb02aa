import FoundationEssentials
import Glibc
import SpokesCluster
import SpokesConcurrency
import SpokesConsensus
import Synchronization

/// A node's host for many Raft groups, keyed by group id: the shell that runs each
/// group's `RaftReplica` on this node (a `RaftGroupRunner` each: storage, timer, state
/// machine) and carries their messages over the cluster's connections (`RaftEndpoint`,
/// well-known name `raft`, on every node that runs a host; `RaftOutbox`).
///
/// Replica names are node names: a group's replica on node `n2` is `n2`, and its
/// messages go to whichever incarnation of `n2` is connected now. A group is opened on
/// each of its replicas' nodes with the same `RaftGroup` (the job layer decides where, and
/// asks the other replicas' hosts through ``RaftEndpoint/openGroup(_:definition:)``), and
/// reopened after a restart from the same data directory (``reopenStoredGroups()``). `propose` waits until a majority holds the command and this
/// node has applied it; on a replica that does not lead, it forwards the command once
/// to the leader it knows.
public final class RaftHost: Sendable {
    public let settings: RaftHostSettings
    private let system: ClusterSystem
    /// Seconds from a proposal made here to its commit and apply (see `init`).
    private let commitLatency: LatencyHistogram?
    private let outbox: RaftOutbox
    private let groups = Mutex<[String: RaftGroupRunner]>([:])
    /// How many times a group was opened here or a replica here applied something (its
    /// applied index moved, ``appliedIndex(of:)``): a reader that saw the same count
    /// before knows every replica here holds the state it held then, without a hop onto
    /// any of them (the simulator's checks, after every event).
    public let appliedChanges = ChangeCount()
    private let opening = Mutex<Set<String>>([])
    private let endpoint = Mutex<RaftEndpoint?>(nil)
    private let stopped = Atomic<Bool>(false)
    private let unknownGroupMessages = Atomic<Int>(0)
    private let nonMemberMessages = Atomic<Int>(0)
    /// Groups this node removed since it started (their work was done), newest last, at
    /// most ``maximumGroups``: a replica that missed the end of a group's work asks.
    private let removedGroups = Mutex<(order: [String], set: Set<String>)>(([], []))

    /// State machines for groups other replicas ask this node to open, by the group id's
    /// kind (what comes before its first `-`: `taskjob` for `taskjob-map-0a3f442b`).
    private let machines: [String: @Sendable () -> any ReplicatedStateMachine]

    /// A host on `system`'s node; its endpoint answers at once. `machines` make the state
    /// machines of groups opened at another replica's request (``RaftEndpoint/openGroup(_:definition:)``)
    /// and reopened after a restart (``reopenStoredGroups()``).
    /// `commitLatency` counts, for every proposal made on this node while it leads the
    /// group, the seconds until it was committed and applied (``ClusterNode/raftCommitLatency``
    /// for `GET /metrics`); proposals forwarded to another leader are counted there.
    public init(
        system: ClusterSystem, settings: RaftHostSettings, machines: [String: @Sendable () -> any ReplicatedStateMachine] = [:],
        commitLatency: LatencyHistogram? = nil
    ) {
        self.commitLatency = commitLatency
        self.system = system
        self.settings = settings
        self.machines = machines
        outbox = RaftOutbox(system: system, settings: settings)
        // Raft's messages, both ways, run on the runtime's protocol thread: a leader's
        // heartbeats and its followers' answers never wait behind user tasks (issue 33).
        system.runOnProtocolThread(callsTo: RaftEndpoint.wellKnownName)
        let hosted = ClusterSystem.withWellKnownName(RaftEndpoint.wellKnownName) {
            RaftEndpoint(
                actorSystem: system,
                deliver: { [weak self] envelopes, sender in await self?.deliver(envelopes, from: sender) },
                propose: { [weak self] group, command in
                    guard let self else { return .failed(.stopped(node: system.node.name)) }
                    do throws(RaftHostError) {
                        return .committed(try await self.propose(group: group, command: command, forward: false))
                    } catch {
                        return .failed(error)
                    }
                },
                removed: { [weak self] group in self?.wasRemoved(group) ?? false },
                open: { [weak self] id, group in
                    guard let self else { return "\(system.node.name) is stopping" }
                    return await self.openForPeer(id, group)
                },
                leaderReplicas: { [weak self] group in
                    guard let status = await self?.status(of: group), status.role == .leader, status.replicasCommitted else { return nil }
                    return status.replicas
                })
        }
        endpoint.withLock { $0 = hosted }
    }

    private var name: String { system.node.name }

    /// Opens this node's replica of group `id` (replicas named by node names, this node
    /// among them) with `machine` as its state machine: recovers the group's directory
    /// (`settings.dataDirectory`/`id`) or creates it, and starts it, unless `starts` is
    /// false: then it holds the group, ticks nothing and sends nothing until
    /// ``start(group:)``, a message for it or a proposal.
    ///
    /// Why a new group's first leader waits: started at once, it sends its first appends
    /// before its peers have opened the group, they drop them, and it tries them again
    /// only at its next heartbeat, so a job's first commit took a heartbeat interval
    /// (100 ms of a 3-user job's 1.9 s). ``JobGroups`` opens the group here, then on the
    /// peers, then starts it here.
    public func open(group id: String, _ group: RaftGroup, machine: any ReplicatedStateMachine, starts: Bool = true) async throws(RaftHostError) {
        try await open(group: id, group, machine: machine, starts: starts, replacing: nil)
    }

    /// ``open(group:_:machine:starts:)``; `replacing`: the replica here that stopped on a
    /// failed write or flush, which keeps its place (and says why it stopped) until the
    /// new one opens; the new one's storage rewrites what it recovers first
    /// (``RaftStorage/init(directory:disk:rewritingWhatItReads:)``).
    private func open(
        group id: String, _ group: RaftGroup, machine: any ReplicatedStateMachine, starts: Bool, replacing failed: RaftGroupRunner?
    ) async throws(RaftHostError) {
        try RaftGroupID.validate(id)
        guard !stopped.load(ordering: .acquiring) else { throw .stopped(node: name) }
        guard group.replicas.contains(name) else { throw .notAReplica(group: id, node: name) }
        let claimed = opening.withLock { opening in
            groups.withLock { $0[id] == nil || ($0[id] === failed && failed != nil) } && opening.insert(id).inserted
        }
        guard claimed else { throw .groupExists(id, node: name) }
        defer { opening.withLock { _ = $0.remove(id) } }
        let directory = DiskPath.join(settings.dataDirectory, id)
        let name = name
        let dataDirectory = settings.dataDirectory
        let disk = system.runtime.disk
        let opened: Result<RaftStorage, RaftHostError> = await runBlocking("spokes.raft.open") {
            do throws(DiskError) {
                try disk.makeDirectory(dataDirectory)
            } catch {
                return .failure(.replicaFailed(group: id, node: name, reason: "\(error)"))
            }
            do throws(RaftGroupDefinitionFile.Failure) {
                if let stored = try RaftGroupDefinitionFile.read(in: directory, disk: disk) {
                    guard stored == group else {
                        return .failure(.definitionChanged(group: id, node: name, stored: Self.describe(stored), given: Self.describe(group)))
                    }
                } else {
                    try RaftGroupDefinitionFile.write(group, in: directory, disk: disk)
                }
            } catch {
                return .failure(.replicaFailed(group: id, node: name, reason: error.reason))
            }
            do throws(RaftStorageError) {
                return .success(try RaftStorage(directory: directory, disk: disk, rewritingWhatItReads: failed != nil))
            } catch {
                return .failure(.replicaFailed(group: id, node: name, reason: "cannot open its storage: \(error)"))
            }
        }
        let storage = try opened.get()
        if let dropped = storage.droppedTail { system.log("raft \(id): \(dropped)", level: .warning) }
        let replica: RaftReplica
        do {
            replica = try RaftReplica(id: name, group: group, state: storage.recovered, configuration: settings.raft, seed: system.runtime.seed())
        } catch {
            storage.close()
            throw .replicaFailed(group: id, node: name, reason: "\(error)")
        }
        let system = system
        let runner = RaftGroupRunner(
            id: id, node: name, replica: replica, storage: storage, machine: machine, settings: settings, outbox: outbox,
            runtime: system.runtime, appliedChanges: appliedChanges, log: { line, level in system.log(line, level: level) },
            onStorageFailure: { [weak self] in self?.startAgainFromDisk(id) })
        if let failed {
            // In the failed replica's place only if it still holds it: the group may have
            // been removed, or the host stopped, while the storage was read and rewritten.
            let removed = wasRemoved(id)
            let placed = groups.withLock { groups in
                guard groups[id] === failed, !removed, !stopped.load(ordering: .acquiring) else { return false }
                groups[id] = runner
                return true
            }
            guard placed else {
                await runner.stop()
                throw .groupExists(id, node: name)
            }
            await failed.stop()
        } else {
            groups.withLock { $0[id] = runner }
        }
        appliedChanges.bump()
        if starts { await runner.start() }
        if stopped.load(ordering: .acquiring) { await runner.stop() }
    }

    /// Seconds before a replica whose storage failed is first started again from its
    /// disk, and the most between two tries (each wait doubles).
    static let restartAfterStorageFailure: ClosedRange<Double> = 1...16
    /// Per group, the wait before its replica's last start from its disk, and when: a
    /// replica that fails again within four of the longest waits starts from the double.
    private let restartWaits = Mutex<[String: (wait: Double, at: Double)]>([:])

    /// Starts group `id`'s replica here again from what its disk holds, as a restart of
    /// the node would, after its storage failed (a full disk): tried after
    /// ``restartAfterStorageFailure``'s lower bound, then again with the wait doubled, up
    /// to its upper bound, until it opens, while this host runs, the group is not removed
    /// and nothing else opened it. A stopped replica stays stopped otherwise: a group
    /// whose majority stopped so (two full disks of three) never moved again, and its job
    /// waited forever with its client (`simulate-cluster --model nodes --nodes 3`, seed
    /// 500). What the disk holds may be pages a failed flush left unwritten, so the
    /// storage rewrites it first.
    private func startAgainFromDisk(_ id: String) {
        guard let failed = groups.withLock({ $0[id] }), let make = machines[String(id.prefix { $0 != "-" })] else { return }
        let definition = failed.definition
        let runtime = system.runtime
        // A replica that fails again soon after it started again waits longer: a disk with
        // room to rewrite the log but not for the next write would restart it every second.
        let previous = restartWaits.withLock { $0[id] }
        let recent = previous.map { runtime.now - $0.at < Self.restartAfterStorageFailure.upperBound * 4 } ?? false
        Task { [weak self] in
            var wait = recent ? min(2 * previous!.wait, Self.restartAfterStorageFailure.upperBound) : Self.restartAfterStorageFailure.lowerBound
            while true {
                try? await runtime.clock.sleep(for: wait)
                // Not when the host stops, the group was removed, or opened again meanwhile.
                guard let self, !self.stopped.load(ordering: .acquiring), !self.wasRemoved(id), self.groups.withLock({ $0[id] === failed }),
                      await failed.status.failure != nil
                else { return }
                do throws(RaftHostError) {
                    try await self.open(group: id, definition, machine: make(), starts: true, replacing: failed)
                    self.restartWaits.withLock { $0[id] = (wait, runtime.now) }
                    self.system.log("raft \(id): the replica on \(self.name) started again from its disk", level: .warning)
                    return
                } catch .groupExists {
                    return
                } catch {
                    self.system.log("raft \(id): the replica on \(self.name) cannot start again yet: \(error)", level: .warning)
                    wait = min(2 * wait, Self.restartAfterStorageFailure.upperBound)
                }
            }
        }
    }

    /// Starts group `id`'s replica here, opened with `starts: false` (nothing when it runs
    /// already or is not held here).
    public func start(group id: String) async {
        await groups.withLock { $0[id] }?.start()
    }

    /// Most replicas of a group a peer may ask this node to open (a job's group has 3).
    public static let maximumReplicasOfAPeersGroup = 7
    /// Most groups a node holds at once when a peer asks it to open one more (finished
    /// jobs' groups are removed, so this bounds the jobs running at once, not over time).
    public static let maximumGroups = 10_000

    /// Opens group `id` with the machine its kind's factory makes; nil when it is open
    /// (now or already), else why not (a peer's request over the limits above is refused).
    func openForPeer(_ id: String, _ group: RaftGroup) async -> String? {
        guard group.replicas.count <= Self.maximumReplicasOfAPeersGroup else {
            return "a group of \(group.replicas.count) replicas; a peer may ask for at most \(Self.maximumReplicasOfAPeersGroup)"
        }
        guard groups.withLock({ $0.count }) < Self.maximumGroups else {
            return "\(name) holds \(Self.maximumGroups) groups already"
        }
        let kind = String(id.prefix { $0 != "-" })
        guard let make = machines[kind] else { return "\(name) has no state machine for groups of kind '\(kind)'" }
        do throws(RaftHostError) {
            try await open(group: id, group, machine: make())
            return nil
        } catch .groupExists {
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// Reopens every group stored in the data directory whose kind has a machine (what a
    /// restarted node does first); returns the ids that could not be reopened, with why.
    @discardableResult
    public func reopenStoredGroups() async -> [String: String] {
        var failed: [String: String] = [:]
        for (id, group) in await storedGroups().sorted(by: { $0.key < $1.key }) where group.replicas.contains(name) {
            if let problem = await openForPeer(id, group) { failed[id] = problem }
        }
        return failed
    }

    /// "replicas n1, n2, n3 (first leader n1)".
    static func describe(_ group: RaftGroup) -> String {
        "replicas \(group.replicas.joined(separator: ", "))" + (group.firstLeader.map { " (first leader \($0))" } ?? "")
            + (group.creation.map { ", created as \(String($0, radix: 16))" } ?? "")
    }

    /// The groups stored in the data directory (each with the definition it was created
    /// with), by id: what a restarted node reopens.
    public func storedGroups() async -> [String: RaftGroup] {
        let dataDirectory = settings.dataDirectory
        let disk = system.runtime.disk
        return await runBlocking("spokes.raft.list") {
            let names = ((try? disk.contents(ofDirectory: dataDirectory)) ?? nil) ?? []
            var groups: [String: RaftGroup] = [:]
            for name in names where (try? RaftGroupID.validate(name)) != nil {
                let directory = DiskPath.join(dataDirectory, name)
                if let group = try? RaftGroupDefinitionFile.read(in: directory, disk: disk) { groups[name] = group }
            }
            return groups
        }
    }

    /// The groups this node holds a replica of, by id.
    public var groupIDs: [String] { groups.withLock { $0.keys.sorted() } }

    /// Proposes `command` to `group` and waits (at most `settings.proposalTimeout`) until
    /// it is committed and applied here, returning where it landed and its result. If
    /// this replica does not lead and `forward` is true, the command goes to the leader
    /// this replica knows, once; otherwise, or without a known leader, it fails with
    /// `notLeader` naming the leader (if any).
    public func propose(group id: String, command: String, forward: Bool = true) async throws(RaftHostError) -> RaftCommit {
        guard let runner = groups.withLock({ $0[id] }) else { throw .unknownGroup(id, node: name) }
        let started = system.runtime.now
        let proposed: (index: Int, commit: Future<RaftCommit, RaftHostError>)
        do {
            proposed = try await runner.propose(command)
        } catch {
            guard forward, case .notLeader(_, _, let leader?) = error, leader != name else { throw error }
            return try await forwardProposal(command, of: id, to: leader)
        }
        return try await applied(proposed, of: id, on: runner, since: started)
    }

    /// Makes `replicas` the replicas of `group` (one added or removed) through its log,
    /// from this node's replica, which must lead; waits as ``propose(group:command:forward:)``
    /// does. A replica being added must already hold the group (``RaftEndpoint/openGroup(_:definition:)``
    /// on its node, with these replicas): it then catches up from the leader's log or
    /// snapshot.
    @discardableResult
    public func changeReplicas(of id: String, to replicas: [String]) async throws(RaftHostError) -> RaftCommit {
        guard let runner = groups.withLock({ $0[id] }) else { throw .unknownGroup(id, node: name) }
        let started = system.runtime.now
        return try await applied(try await runner.proposeReplicas(replicas), of: id, on: runner, since: started)
    }

    /// Waits (at most `settings.proposalTimeout`) until a proposed entry is applied here;
    /// the commit latency counts from `started`, when it was proposed.
    private func applied(
        _ proposed: (index: Int, commit: Future<RaftCommit, RaftHostError>), of id: String, on runner: RaftGroupRunner, since started: Double
    ) async throws(RaftHostError) -> RaftCommit {
        let seconds = settings.proposalTimeout
        let commit = proposed.commit
        let result: Result<RaftCommit, RaftHostError>
        do {
            result = try await withTimeout(seconds: seconds, clock: system.runtime.clock) { await commit.result }
        } catch {
            await runner.abandon(proposed.index)
            throw .outcomeUnknown(group: id, index: proposed.index, reason: "not applied within \(seconds) s")
        }
        if case .success = result { commitLatency?.observe(system.runtime.now - started) }
        return try result.get()
    }

    private func forwardProposal(_ command: String, of id: String, to leader: String) async throws(RaftHostError) -> RaftCommit {
        guard let node = system.connectedNode(named: leader) else {
            throw .leaderUnreachable(group: id, leader: leader, reason: "not connected to \(name)")
        }
        let outcome: RaftProposalOutcome
        do {
            let endpoint = try RaftEndpoint.resolve(id: ActorID(node: node, name: RaftEndpoint.wellKnownName), using: system)
            outcome = try await endpoint.propose(group: id, command: command)
        } catch {
            throw .leaderUnreachable(group: id, leader: leader, reason: "\(error)")
        }
        switch outcome {
        case .committed(let commit): return commit
        case .failed(let error): throw error
        }
    }

    /// Whether this node removed its replica of `group` since it started because its
    /// committed state was finished (``Removal/finished``).
    public func wasRemoved(_ group: String) -> Bool {
        removedGroups.withLock { $0.set.contains(group) }
    }

    /// This node's replica of `group` and a copy of its state machine, read at one moment
    /// (nil if it holds none): what a take-over decides on. Read apart, the replica could
    /// apply more between the two reads, and a status saying "everything applied" would
    /// vouch for an older machine.
    public func statusAndMachine(of group: String) async -> (status: RaftGroupStatus, machine: any ReplicatedStateMachine)? {
        guard let runner = groups.withLock({ $0[group] }) else { return nil }
        return await runner.statusAndMachine
    }

    /// The applied index of this node's replica of `group` (nil if it holds none), read
    /// without waiting for the replica's turn: what it was when the replica last
    /// finished handling something. The simulator's checks read a replica's state again
    /// (``statusAndMachine(of:)``) only when this moved.
    public func appliedIndex(of group: String) -> Int? {
        groups.withLock { $0[group] }?.appliedIndex
    }

    /// This node's replica of `group` now, or nil if it holds none.
    public func status(of group: String) async -> RaftGroupStatus? {
        guard let runner = groups.withLock({ $0[group] }) else { return nil }
        return await runner.status
    }

    /// Every group this node holds a replica of, as this replica sees it now (role, term,
    /// leader, commit index) with its replicas, by group id: what the node's dashboard and
    /// status show (`ClusterNode.setReplicaGroups`).
    public func groupViews() async -> [ReplicaGroupView] {
        let runners = groups.withLock { $0.values.sorted { $0.id < $1.id } }
        var views: [ReplicaGroupView] = []
        for runner in runners {
            let status = await runner.status
            views.append(ReplicaGroupView(
                id: runner.id, node: status.replica, replicas: status.replicas, leader: status.leader, term: status.term,
                role: status.role.rawValue, commitIndex: status.commitIndex))
        }
        return views
    }

    /// The definition (replicas, first leader) of this node's replica of `group`, or nil
    /// if it holds none.
    public func definition(of group: String) -> RaftGroup? {
        groups.withLock { $0[group] }?.definition
    }

    /// A copy of the state machine of this node's replica of `group` (what it applied so
    /// far), or nil if it holds none.
    public func stateMachine(of group: String) async -> (any ReplicatedStateMachine)? {
        guard let runner = groups.withLock({ $0[group] }) else { return nil }
        return await runner.stateMachine
    }

    /// Asks this node's replica of `group`, if it leads, to hand leadership to `target`
    /// (before a planned stop, say).
    public func transferLeadership(of group: String, to target: String) async {
        await groups.withLock({ $0[group] })?.transferLeadership(to: target)
    }

    /// Messages that found no group here, and messages this node could not deliver.
    public var droppedMessages: (unknownGroup: Int, undelivered: Int) {
        (unknownGroupMessages.load(ordering: .relaxed), outbox.droppedMessages)
    }

    /// Why a replica is removed, which decides what the node answers about it later.
    public enum Removal: Sendable, Hashable {
        /// Its committed state is finished (a job's end is in its log): the node answers
        /// ``wasRemoved(_:)`` true, and a replica that missed the end may delete its own.
        case finished
        /// Anything else (empty for long, its first entry never committed here, a test):
        /// the node forgets it without a word, since the other replicas may still hold a
        /// live job in it, and must never be told to delete their logs.
        case abandoned
    }

    /// Stops this node's replica of `group` and deletes its directory. Messages for it are
    /// dropped from then on. Only a `.finished` group is remembered as removed (review,
    /// issue 29 §1.1: a group dropped while empty was answered "removed", and a live job's
    /// leaderless replicas deleted their logs on that answer).
    public func remove(group id: String, _ removal: Removal) async {
        guard let runner = groups.withLock({ $0.removeValue(forKey: id) }) else { return }
        if removal == .finished {
            removedGroups.withLock { removed in
                guard removed.set.insert(id).inserted else { return }
                removed.order.append(id)
                if removed.order.count > Self.maximumGroups { removed.set.remove(removed.order.removeFirst()) }
            }
        }
        await runner.stop()
        let directory = DiskPath.join(settings.dataDirectory, id)
        let disk = system.runtime.disk
        await runBlocking("spokes.raft.remove") { try? disk.removeTree(directory) }
    }

    /// Stops every group (their storage closed: what was not flushed is lost, as in a
    /// crash) and the endpoint; waiting proposals fail with `stopped`.
    public func stop() async {
        stopped.store(true, ordering: .releasing)
        let runners = groups.withLock { groups in
            defer { groups.removeAll() }
            return Array(groups.values)
        }
        for runner in runners { await runner.stop() }
        endpoint.withLock { $0 = nil }
    }

    /// Messages that named as their sender no member this node is connected to, or
    /// another node than the one whose connection carried them, dropped.
    public var messagesFromNonMembers: Int { nonMemberMessages.load(ordering: .relaxed) }

    /// Hands envelopes to this node's replicas. A replica hears any replica of its group,
    /// in its configuration or not (a leader that added it again, a candidate it must
    /// vote for), so the names heard are checked here: only a member this node is
    /// connected to speaks for a replica, and only for itself (the name is the one its
    /// connection's handshake proved, ``ClusterSystem/caller``); a client, whatever name it
    /// gives, does not.
    private func deliver(_ envelopes: [RaftEnvelope], from sender: String) async {
        let speaksForItself = ClusterSystem.caller.map { $0.name == sender } ?? true
        guard speaksForItself, system.connectedNode(named: sender) != nil else {
            nonMemberMessages.add(envelopes.reduce(0) { $0 + $1.messages.count }, ordering: .relaxed)
            return
        }
        for envelope in envelopes {
            guard let runner = groups.withLock({ $0[envelope.group] }) else {
                unknownGroupMessages.add(envelope.messages.count, ordering: .relaxed)
                continue
            }
            await runner.receive(envelope.messages, from: sender)
        }
    }
}
