import SpokesCluster
import SpokesConcurrency
import SpokesConsensus
import SpokesReplication

/// What the job layers share about the Raft groups that keep running jobs, one group per
/// job (`taskjob-ID` for jobs of tasks, `job-ID` for a workload's jobs, `bikejob-ID` for
/// bike jobs an earlier release made): choosing the replicas, opening the group on each of
/// them, and proposing while the first election runs.
public struct JobGroups: Sendable {
    public let host: RaftHost
    public let system: ClusterSystem
    private let members: @Sendable () -> [Member]

    /// `members` are the node's members now (the node passes them, weakly held), in any
    /// order: nothing here depends on it (a choice among them sorts them first).
    public init(host: RaftHost, system: ClusterSystem, members: @escaping @Sendable () -> [Member]) {
        self.host = host
        self.system = system
        self.members = members
    }

    /// The alive members now, in the order `members` gives them.
    public var aliveMembers: [Member] { members().filter { $0.state == .alive } }

    /// The members to replicate a new job on beside this node (`jobs.replicas` minus
    /// one, the first alive ones by name); nil when there are too few, or the setting
    /// keeps jobs on the coordinator alone.
    public func replicaPeers() -> [NodeID]? {
        let wanted = system.settings.jobReplicas - 1
        guard wanted > 0 else { return nil }
        let others = aliveMembers.map(\.node).sorted { $0.name < $1.name }.prefix(wanted)
        return others.count == wanted ? Array(others) : nil
    }

    /// Opens group `id` on this node (its first leader) and on `peers`, each with
    /// `machine` from its host's factory for the id's kind, then proposes `first` (waiting
    /// out the first election, up to 5 s). Throws ``ReplicationFailure`` naming `job`
    /// when fewer than a majority of the replicas could be opened (the group is then
    /// removed here: nothing was proposed) or `first` was not committed. In that last case
    /// `first` may still commit later under another leader (review, issue 29 §1.4: a job
    /// reported refused ran), so the group stays and `cancel` is committed after it,
    /// where given: then the job, if it ever starts, runs nothing. If that cannot be
    /// committed either, the failure says the outcome is unknown and how to follow it.
    public func open(
        _ id: String, for job: String, with peers: [NodeID], machine: any ReplicatedStateMachine, first: String, cancel: String? = nil
    ) async throws {
        let me = system.node.name
        let definition = try RaftGroup(replicas: [me] + peers.map(\.name), firstLeader: me, creation: system.runtime.seed())
        // Started once the peers hold it (see `RaftHost.open`): its first appends then
        // reach them, and its first entry commits without waiting for a heartbeat.
        try await host.open(group: id, definition, machine: machine, starts: false)
        let system = system
        let opened = await withTaskGroup(of: Bool.self) { group in
            for peer in peers {
                group.addTask {
                    guard let endpoint = try? RaftEndpoint.resolve(id: ActorID(node: peer, name: RaftEndpoint.wellKnownName), using: system) else {
                        return false
                    }
                    do {
                        return try await withTimeout(seconds: 3, clock: system.runtime.clock) { try await endpoint.openGroup(id, definition: definition) } == nil
                    } catch {
                        return false
                    }
                }
            }
            var count = 1
            for await ok in group where ok { count += 1 }
            return count
        }
        guard opened * 2 > definition.replicas.count else {
            // Refused: nothing was proposed, and no replica of it may linger here.
            await host.remove(group: id, .abandoned)
            throw ReplicationFailure(job: job, reason: "only \(opened) of its \(definition.replicas.count) replicas could be opened")
        }
        await host.start(group: id)
        try await Self.confirmFirst(
            job: job, propose: { try await self.proposeWhileElecting(first, to: id) },
            cancel: cancel.map { cancel in { try await self.proposeWhileElecting(cancel, to: id) } })
    }

    /// Commits a new group's first entry with `propose`; when that fails, its outcome is
    /// unknown (the entry may commit later), so `cancel` is committed after it, where
    /// given. Throws ``ReplicationFailure``: refused when the cancellation committed (the
    /// job runs nothing, wherever it may start), outcome unknown when it did not.
    static func confirmFirst(
        job: String, propose: () async throws -> Void, cancel: (() async throws -> Void)?
    ) async throws(ReplicationFailure) {
        do {
            try await propose()
            return
        } catch {
            let why = "its start was not committed within 5 s (\(error))"
            guard let cancel else { throw ReplicationFailure(job: job, reason: why, outcomeUnknown: true) }
            do {
                try await cancel()
                throw ReplicationFailure(job: job, reason: why + "; its cancellation is, so it runs nowhere")
            } catch let failure as ReplicationFailure {
                throw failure
            } catch {
                throw ReplicationFailure(job: job, reason: why + ", nor its cancellation (\(error))", outcomeUnknown: true)
            }
        }
    }

    /// Proposes `command` to `group` (its leader's, forwarded if need be), again while it
    /// has no leader yet (up to 5 s); returns the commit. A command proposed twice may be
    /// applied twice: its machine must take a repeat as one.
    @discardableResult
    public func proposeWhileElecting(_ command: String, to group: String) async throws -> RaftCommit {
        let runtime = system.runtime
        let deadline = runtime.now + 5
        while true {
            do {
                return try await host.propose(group: group, command: command)
            } catch {
                guard runtime.now < deadline else { throw error }
                try await runtime.sleep(for: 0.05)
            }
        }
    }

    /// Commits `command` for `job` in `group` if this replica leads it (no forwarding):
    /// false, and a line in the log, when it cannot (this node no longer owns the job).
    public func commitHere(_ command: String, to group: String, for job: String, what: String) async -> Bool {
        do {
            _ = try await host.propose(group: group, command: command, forward: false)
            return true
        } catch {
            system.log("job \(job): cannot commit its \(what) here (\(error)); its group's leader decides")
            return false
        }
    }

    /// What ``watch(kind:job:isRunning:abandon:takeOver:)`` needs to know of a group's
    /// state machine: its job's id (nil before the job is recorded) and whether the job finished.
    public struct JobState: Sendable {
        public var job: String?
        public var finished: Bool

        public init(job: String?, finished: Bool) {
            self.job = job
            self.finished = finished
        }

        /// A group's job as the watcher sees it: `job`, `finished`, and whether a
        /// cancellation is committed. A cancellation committed with no job before it (a
        /// start that was refused) leaves nothing to run, ever: the job can only have
        /// come first.
        public init(job: String?, finished: Bool, cancelled: Bool) {
            self.init(job: job, finished: finished || (job == nil && cancelled))
        }
    }

    /// The state machines of this node's groups of `kind` whose leader is not an alive
    /// member (it died, and the election has not ended) or is this node (it takes the job
    /// over now): the jobs held here that no other node runs, which the job layers list as
    /// running (finished ones are theirs to leave out).
    /// With each, why its job cannot go on now (``stall(replicas:me:failure:alive:)``), or nil.
    public func heldWithoutOtherLeader(kind: String) async -> [(machine: any ReplicatedStateMachine, stalled: String?)] {
        let alive = Set(aliveMembers.map(\.node.name))
        let me = system.node.name
        var held: [(machine: any ReplicatedStateMachine, stalled: String?)] = []
        for id in host.groupIDs where id.hasPrefix(kind + "-") {
            guard let (status, machine) = await host.statusAndMachine(of: id),
                  let stalled = Self.held(leader: status.leader, replicas: status.replicas, me: me, failure: status.failure, alive: alive)
            else { continue }
            held.append((machine, stalled))
        }
        return held
    }

    /// Whether this node lists a group's job as held here, and if so why it cannot go on
    /// (the inner optional, ``stall(replicas:me:failure:alive:)``): its leader is not an
    /// alive member or is this node, and, where this replica stopped (`failure`: its disk
    /// filled, say), too few of the others can take part to run the job without it. A
    /// stopped replica whose group goes on elsewhere never learns the job ended there:
    /// listed as running, its job stayed "running" on this node for good after it was
    /// stored, and `spokes result --wait` asked of this node waited on
    /// (`simulate-cluster --model nodes --nodes 5`, seed 6: a full disk, then a clock jump,
    /// at a map's coordinator).
    static func held(leader: String?, replicas: [String], me: String, failure: String?, alive: Set<String>) -> String?? {
        guard leader.map({ $0 == me || !alive.contains($0) }) ?? true else { return nil }
        let stalled = stall(replicas: replicas, me: me, failure: failure, alive: alive)
        if failure != nil, stalled == nil { return nil }
        return .some(stalled)
    }

    /// Whether this node holds a replica of group `id` that has not stopped and knows no
    /// alive leader but itself: the job will go on once its group elects one, even while
    /// this replica, restarted and not yet told what was committed, cannot list it. A
    /// client following a lost job keeps following while a member holds its group so
    /// (issue 30 §3: in a rolling upgrade every replica restarted within the client's
    /// patience, and it gave up on a job that went on). Where an alive leader runs the
    /// job, this is false: a client cut off from it is told so within its bound
    /// (test-partitions, scenario 5).
    public func holds(_ id: String) async -> Bool {
        guard let status = await host.status(of: id), status.failure == nil else { return false }
        let alive = Set(aliveMembers.map(\.node.name))
        return status.leader.map { $0 == system.node.name || !alive.contains($0) } ?? true
    }

    /// Why a group's job cannot go on now, or nil: fewer than a majority of its replicas
    /// can take part, counting this node's unless it stopped (`failure`: its storage
    /// failed, say) and the others that are alive members. It goes on once a majority is
    /// back (a dead node restarted with its disk); the words name what is missing.
    static func stall(replicas: [String], me: String, failure: String?, alive: Set<String>) -> String? {
        let quorum = replicas.count / 2 + 1
        let taking = replicas.filter { $0 == me ? failure == nil : alive.contains($0) }
        guard taking.count < quorum else { return nil }
        var missing: [String] = []
        if let failure, replicas.contains(me) { missing.append("its replica on \(me) stopped (\(failure))") }
        let dead = replicas.filter { $0 != me && !alive.contains($0) }
        if !dead.isEmpty { missing.append("\(dead.joined(separator: ", ")) \(dead.count == 1 ? "is" : "are") not alive") }
        return "\(taking.count) of its \(replicas.count) replicas can take part, a majority is \(quorum): "
            + missing.joined(separator: "; ") + "; it goes on once a majority of them is back"
    }

    /// Seconds a replica keeps a finished job's group (so the other replicas learn it
    /// finished) before it removes it; its leader keeps it 2 s more.
    public static let finishedGroupLingers = 10.0
    /// Seconds a group that never received an entry (its job was refused while its
    /// replicas were being made) is kept.
    public static let emptyGroupLingers = 30.0

    /// Watches this node's groups of `kind` every ``watchInterval`` (0.25 s) until the
    /// returned task is cancelled:
    /// - where this replica leads a job that has not finished, has applied its whole log
    ///   (its term's first entry commits every earlier one, so no committed change is
    ///   missed) and does not run the job, `takeOver` runs it;
    /// - a finished job's run here is stale (it ended under another leader): `abandon`;
    /// - a finished job's group is removed after ``finishedGroupLingers``, an empty one
    ///   after ``emptyGroupLingers``, so done jobs cost no timers or disk. (A replica that
    ///   restarted has its log, and waits for an election as long as it takes.)
    /// - where this replica leads, a replica on a member dead for `jobs.replace_after`
    ///   seconds, or silent for as long though its node lives (its storage failed and it
    ///   stopped, or a one-way cut: its leader has not heard it), is removed, then an
    ///   alive member is added in its place (never, while its node runs on, the silent
    ///   one removed)
    ///   (``nextReplicaChange(group:replicas:me:target:alive:deadSince:now:replaceAfter:)``,
    ///   one change at a time through the group's log; the new replica catches up from
    ///   the log or a snapshot), so one death after another never leaves a job stuck;
    /// - a replica that stopped (its storage failed), or a group that has had no alive
    ///   leader for ``leaderlessAsks`` seconds, asks its
    ///   other replicas, every as many seconds, whether they removed it: one that was away
    ///   when its job finished and the others removed the group would otherwise list the
    ///   job as waiting for a take-over forever. If one did, the job is done: it is
    ///   removed here too.
    public func watch(
        kind: String, job: @escaping @Sendable (_ group: String, any ReplicatedStateMachine) -> JobState?,
        isRunning: @escaping @Sendable (String) async -> Bool, abandon: @escaping @Sendable (String) async -> Void,
        takeOver: @escaping @Sendable (any ReplicatedStateMachine, RaftGroupStatus) async -> Void
    ) -> Task<Void, Never> {
        let host = host
        let system = system
        let members = members
        return Task {
            /// Since when each group has been done with (finished, or empty), by id.
            var doneSince: [String: Double] = [:]
            /// Since when (or since the last question) each group has had no alive leader.
            var leaderlessSince: [String: Double] = [:]
            /// Since when each node this node has seen in a group is not alive, by name.
            var deadSince: [String: Double] = [:]
            /// When a group whose replica change failed may try again, by id.
            var changeAgainAt: [String: Double] = [:]
            /// Replicas removed while their node lived (silent), by group: that node, in
            /// that incarnation, is not chosen for the group again.
            var removedSilent: [String: Set<NodeID>] = [:]
            /// Removes group `id` once it has been done with for `seconds`: `.finished`
            /// only when its committed state says the job finished.
            func remove(_ id: String, after seconds: Double, _ removal: RaftHost.Removal) async {
                let since = doneSince[id] ?? system.runtime.now
                doneSince[id] = since
                guard system.runtime.now - since >= seconds else { return }
                await host.remove(group: id, removal)
                doneSince[id] = nil
            }
            let prefix = kind + "-"
            while !Task.isCancelled {
                let ids = host.groupIDs.filter { $0.hasPrefix(prefix) }
                let remembersGroups = !(leaderlessSince.isEmpty && changeAgainAt.isEmpty && removedSilent.isEmpty && doneSince.isEmpty)
                // No group of the kind here and nothing remembered: a round would do nothing
                // (most rounds of most nodes, four a second).
                if ids.isEmpty, deadSince.isEmpty, !remembersGroups {
                    try? await system.runtime.sleep(for: Self.watchInterval)
                    continue
                }
                let aliveMembers = members().filter { $0.state == .alive }
                let alive = Set(aliveMembers.map(\.node.name))
                let now = system.runtime.now
                deadSince = deadSince.filter { !alive.contains($0.key) }
                // What is remembered of a group goes with it: a node that runs for months
                // keeps only what its groups now need.
                if remembersGroups {
                    let held = Set(ids)
                    leaderlessSince = leaderlessSince.filter { held.contains($0.key) }
                    changeAgainAt = changeAgainAt.filter { held.contains($0.key) }
                    removedSilent = removedSilent.filter { held.contains($0.key) }
                    doneSince = doneSince.filter { held.contains($0.key) }
                }
                for id in ids {
                    guard let (status, machine) = await host.statusAndMachine(of: id), let state = job(id, machine) else { continue }
                    if state.job == nil, status.lastIndex == 0 {
                        await remove(id, after: Self.emptyGroupLingers, .abandoned)
                        continue
                    }
                    if state.finished {
                        if let job = state.job, await isRunning(job) { await abandon(job) }
                        // The leader goes last: a follower that outlived it would elect a
                        // new leader of a finished job (a failover on the dashboard).
                        await remove(id, after: Self.finishedGroupLingers + (status.role == .leader ? 2 : 0), .finished)
                        continue
                    }
                    doneSince[id] = nil
                    if status.failure != nil || (status.role != .leader && status.leader.map({ !alive.contains($0) }) ?? true) {
                        let since = leaderlessSince[id] ?? system.runtime.now
                        leaderlessSince[id] = since
                        if system.runtime.now - since >= Self.leaderlessAsks {
                            leaderlessSince[id] = system.runtime.now
                            if await Self.removedElsewhere(id, host: host, system: system) {
                                system.log("group \(id) was removed by another replica (its job is done): removing it here")
                                await host.remove(group: id, .finished)
                            } else if let leaders = await Self.replacedElsewhere(id, host: host, system: system) {
                                system.log("group \(id) replaced this node's replica while it was away (its replicas are \(leaders.joined(separator: ", "))): removing it here")
                                await host.remove(group: id, .abandoned)
                            }
                        }
                        continue
                    }
                    leaderlessSince[id] = nil
                    for replica in status.replicas where replica != system.node.name && !alive.contains(replica) && deadSince[replica] == nil {
                        deadSince[replica] = now
                    }
                    let excluded = removedSilent[id].map { silent in Set(aliveMembers.filter { silent.contains($0.node) }.map(\.node.name)) } ?? []
                    if status.role == .leader, status.failure == nil, now >= changeAgainAt[id] ?? 0,
                       let target = host.definition(of: id)?.replicas.count,
                       let change = Self.nextReplicaChange(
                        group: id, replicas: status.replicas, me: system.node.name, target: target, alive: alive, deadSince: deadSince,
                        heardAt: status.followersLastHeard ?? [:], excluded: excluded, now: now, replaceAfter: system.settings.jobReplaceAfter) {
                        if await !Self.make(change, in: id, replicas: status.replicas, host: host, system: system) {
                            changeAgainAt[id] = now + Self.replicaChangeRetry
                        } else if case .remove(let name) = change, let member = aliveMembers.first(where: { $0.node.name == name }) {
                            removedSilent[id, default: []].insert(member.node)
                        }
                    }
                    // A replica that stopped (its storage failed) takes nothing over: it
                    // could commit nothing (the job is listed as stalled instead).
                    guard status.failure == nil, status.role == .leader, status.appliedIndex >= status.lastIndex, let job = state.job, await isRunning(job) == false
                    else { continue }
                    await takeOver(machine, status)
                }
                try? await system.runtime.sleep(for: Self.watchInterval)
            }
        }
    }

    /// Seconds between two rounds of ``watch(kind:job:isRunning:abandon:takeOver:)``.
    static let watchInterval = 0.25

    /// Seconds a group waits after a replica change failed before it tries again.
    public static let replicaChangeRetry = 5.0

    /// One change of a group's replicas: the healing of a group whose node died.
    public enum ReplicaChange: Sendable, Hashable, CustomStringConvertible {
        /// Stop replicating on this dead member.
        case remove(String)
        /// Start replicating on this alive member.
        case add(String)

        public var description: String {
            switch self {
            case .remove(let name): "remove its replica on \(name)"
            case .add(let name): "add a replica on \(name)"
            }
        }
    }

    /// The next change that keeps a group led here on `target` replicas on alive
    /// members, or nil: first a replica whose node has not been alive for `replaceAfter`
    /// seconds, or that this leader has not heard from for as long (`heardAt`: the
    /// leader's ``RaftGroupStatus/followersLastHeard``; a replica whose storage failed
    /// stops answering though its node lives), is removed (from three to two replicas:
    /// the two that answer stay a majority, so the group never waits for the new replica
    /// to catch up), then an alive member that holds no replica and is not `excluded` is
    /// added, while there are fewer than `target`. Which member is drawn from the group's
    /// id, so many groups spread over the members.
    public static func nextReplicaChange(
        group: String, replicas: [String], me: String, target: Int, alive: Set<String>, deadSince: [String: Double],
        heardAt: [String: Double] = [:], excluded: Set<String> = [], now: Double, replaceAfter: Double
    ) -> ReplicaChange? {
        if let dead = replicas.first(where: { $0 != me && !alive.contains($0) && now - (deadSince[$0] ?? now) >= replaceAfter }) {
            return .remove(dead)
        }
        if let silent = replicas.first(where: { $0 != me && now - (heardAt[$0] ?? now) >= replaceAfter }) {
            return .remove(silent)
        }
        guard replicas.count < target else { return nil }
        let candidates = alive.subtracting(replicas).subtracting([me]).subtracting(excluded)
        return candidates.min { spread(group, $0) < spread(group, $1) }.map(ReplicaChange.add)
    }

    /// A number drawn from a group and a member's name (FNV-1a), the same on every node.
    private static func spread(_ group: String, _ member: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in (group + "/" + member).utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return hash
    }

    /// Makes `change` to group `id`, whose replicas are `replicas` and which this node
    /// leads: a member to add is first asked to open the group (with the replicas it will
    /// be one of). Returns whether the change committed; says why in the log if not.
    static func make(_ change: ReplicaChange, in id: String, replicas: [String], host: RaftHost, system: ClusterSystem) async -> Bool {
        let after: [String]
        switch change {
        case .remove(let name):
            after = replicas.filter { $0 != name }
        case .add(let name):
            after = (replicas + [name]).sorted()
            guard let peer = system.connectedPeers.first(where: { $0.node.name == name })?.node,
                  let endpoint = try? RaftEndpoint.resolve(id: ActorID(node: peer, name: RaftEndpoint.wellKnownName), using: system),
                  let definition = try? RaftGroup(replicas: after, creation: host.definition(of: id)?.creation)
            else {
                system.log("group \(id): cannot \(change): not connected to \(name)", level: .warning)
                return false
            }
            let refused: String?? = try? await withTimeout(seconds: 3, clock: system.runtime.clock) { try await endpoint.openGroup(id, definition: definition) }
            guard let answer = refused, answer == nil else {
                system.log("group \(id): cannot \(change): \(name) did not open it (\((refused ?? nil) ?? "no answer within 3 s"))", level: .warning)
                return false
            }
        }
        do {
            try await host.changeReplicas(of: id, to: after)
            system.log("group \(id): \(change); its replicas are \(after.joined(separator: ", "))")
            return true
        } catch {
            system.log("group \(id): cannot \(change): \(error)", level: .warning)
            return false
        }
    }

    /// Seconds a group may have no alive leader before its replica asks the others
    /// whether they removed it (and again every as many seconds).
    public static let leaderlessAsks = 5.0

    /// Whether another replica of group `id` removed it (its job is done).
    static func removedElsewhere(_ id: String, host: RaftHost, system: ClusterSystem) async -> Bool {
        guard let replicas = await host.status(of: id)?.replicas else { return false }
        let peers = system.connectedPeers.filter { replicas.contains($0.node.name) && $0.node.name != system.node.name }
        for peer in peers {
            guard let endpoint = try? RaftEndpoint.resolve(id: ActorID(node: peer.node, name: RaftEndpoint.wellKnownName), using: system) else { continue }
            if (try? await withTimeout(seconds: 2, clock: system.runtime.clock) { try await endpoint.removed(group: id) }) == true { return true }
        }
        return false
    }

    /// The replicas of group `id` as its leader committed them, when they no longer
    /// include this node (it was dead long enough to be replaced); nil otherwise. Only a
    /// leader's committed replicas count: a change not yet committed may still be undone.
    static func replacedElsewhere(_ id: String, host: RaftHost, system: ClusterSystem) async -> [String]? {
        let me = system.node.name
        for peer in system.connectedPeers where peer.node.name != me && !peer.address.isEmpty {
            guard let endpoint = try? RaftEndpoint.resolve(id: ActorID(node: peer.node, name: RaftEndpoint.wellKnownName), using: system),
                  let replicas = try? await withTimeout(seconds: 2, clock: system.runtime.clock, operation: { try await endpoint.leaderReplicas(of: id) })
            else { continue }
            return replicas.contains(me) ? nil : replicas
        }
        return nil
    }

    /// A job whose replicas could not be made, or whose start could not be confirmed.
    public struct ReplicationFailure: Error, Sendable, CustomStringConvertible {
        public var job: String
        public var reason: String
        /// The job's start may still commit and the job run: the submitter is not told it
        /// was refused, but how to follow it.
        public var outcomeUnknown: Bool

        public var description: String {
            guard outcomeUnknown else { return "cannot replicate job \(job): \(reason)" }
            return "cannot tell whether job \(job) was accepted: \(reason); it may still run: follow it with 'spokes result \(job) --wait'"
        }

        public init(job: String, reason: String, outcomeUnknown: Bool = false) {
            self.job = job
            self.reason = reason
            self.outcomeUnknown = outcomeUnknown
        }
    }
}
