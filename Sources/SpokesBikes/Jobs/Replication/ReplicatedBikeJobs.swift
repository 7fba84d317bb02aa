import Foundation
import SpokesCluster
import SpokesConcurrency
import SpokesConsensus
import SpokesReplication

/// Keeps a node's running bike jobs on several nodes, so a job outlives its coordinator
/// (issue 19): each job is a Raft group `bikejob-ID` of the coordinator and
/// `jobs.replicas` minus one alive members, its state a ``BikeJobMachine``.
///
/// - The job is committed (on a majority's disk) before its submitter hears it started.
/// - The coordinator's ``JobLedger`` records every change (an attempt begun, a move, a
///   result counted, a user ended) in the order it made it, and the run commits them in
///   that order, in batches (``BikeJob/Replica``). Moves are answered before they are
///   committed; what is outside the job (the report, the submitter's result) is built
///   only once every change is committed.
/// - Every replica watches its job groups: one that leads a job nobody here runs takes
///   it over from its committed book, under a new epoch (one above the job's, committed
///   first), so workers of the old coordinator cannot reach its stations. Changes the old coordinator made but
///   never committed are lost together, users and stations alike: the committed book
///   is a prefix of the old coordinator's changes, so it is consistent (bikes conserved),
///   and every user not ended runs again from its committed progress.
/// - A coordinator that lost the lead (it was cut off or paused, and replaced) commits
///   nothing more: its run stops and stores nothing.
///
/// With fewer alive members than replicas wanted (or `jobs.replicas: 1`) the group is the
/// coordinator alone: the job is on its disk, and a coordinator started again on its data
/// directory runs it on (a group of two would stop at the death of either node, so a
/// worker's crash would cost the job).
public final class ReplicatedBikeJobs: Sendable {
    /// The kind of bike job groups, for `RaftHost`'s machine factories.
    public static let groupKind = "bikejob"

    /// The group of `job`.
    public static func group(of job: String) -> String { groupKind + "-" + job }

    /// The machine factories a host needs for bike job groups and their station shards.
    public static var machines: [String: @Sendable () -> any ReplicatedStateMachine] {
        [groupKind: { BikeJobMachine() }, BikeShards.groupKind: { StationShardMachine() }]
    }

    private let groups: JobGroups
    private var host: RaftHost { groups.host }
    /// The station shards this node hosts for sharded jobs (its own or other coordinators').
    public let shards: BikeShards

    /// `members` are the node's members now (the node passes them, weakly held).
    public init(host: RaftHost, system: ClusterSystem, members: @escaping @Sendable () -> [Member]) {
        groups = JobGroups(host: host, system: system, members: members)
        shards = BikeShards(host: host, system: system, members: members)
    }

    /// Keeps `job` on its replicas (or this node's disk alone) before it runs; returns how
    /// its run commits its changes. Throws when the replicas could not be made or the job
    /// not committed.
    public func jobStarted(_ job: BikeJob) async throws -> BikeJob.Replica {
        let peers = groups.replicaPeers() ?? []
        let startedAt = groups.system.runtime.unixNow
        // A sharded job's shards are opened first and recorded with the job in its
        // group's first entry: whoever takes the job over finds them.
        let layout = peers.isEmpty || !job.suitsShards(pace: Double(BikeShardSettings.pace.integer(in: groups.system.settings)) / 1000) ? nil : shardLayout()
        var shards: BikeJob.ShardSet?
        if let layout { shards = try await openShards(of: job, layout: layout, epoch: 0) }
        do {
            try await groups.open(
                Self.group(of: job.id), for: job.id, with: peers, machine: BikeJobMachine(), first: BikeJobMachine.start(job, startedAt: startedAt, shards: layout),
                cancel: BikeJobMachine.cancel("refused: its start was not committed in time"))
        } catch {
            if let shards { await self.shards.stopHostingEverywhere(job.id, hosts: shards.hosts) }
            throw error
        }
        return replica(of: job.id, epoch: 0, shards: shards, startedAt: startedAt)
    }

    /// The shards of a new job (`bikes.shards` of them, at most one per alive member, and
    /// none when that is one): for each, the members that replicate it, its first host
    /// first. Shard `k`'s host is the `k`-th of this node and the alive members by name,
    /// so the shards' hosts differ, and its replicas are the hosts that follow it.
    func shardLayout() -> [[String]]? {
        let settings = groups.system.settings
        let candidates = [groups.system.node.name] + groups.aliveMembers.map(\.node.name).sorted()
        let count = min(BikeShardSettings.shards.integer(in: settings), candidates.count)
        guard count > 1 else { return nil }
        let replicas = min(settings.jobReplicas, candidates.count)
        return (0..<count).map { shard in (0..<replicas).map { candidates[(shard + $0) % candidates.count] } }
    }

    /// Opens `job`'s shards in `epoch` from `layout` (each one's replicas, its first host
    /// first). In epoch 0 each starts from the network; later from its committed book.
    func openShards(of job: BikeJob, layout: [[String]], epoch: Int) async throws -> BikeJob.ShardSet {
        let system = groups.system
        let hosts = try Self.hosts(for: layout, alive: [system.node] + groups.aliveMembers.map(\.node), job: job.id)
        let goal = job.startingBook.goalIndex
        let books = try await withThrowingTaskGroup(of: (Int, StationShardBook).self) { group in
            for (shard, host) in hosts.enumerated() {
                let start = epoch == 0 ? StationShardBook(shard: shard, shardCount: layout.count, network: job.network.stations, goalIndex: goal) : nil
                group.addTask {
                    do {
                        let service = try BikeShardService.at(host, using: system)
                        let book = try await withTimeout(seconds: 15) {
                            try await service.open(job: job.id, shard: shard, epoch: epoch, start: start, replicas: layout[shard], hosts: hosts)
                        }
                        return (shard, book)
                    } catch {
                        throw JobGroups.ReplicationFailure(job: job.id, reason: "station shard \(shard) cannot be hosted on \(host.name) in epoch \(epoch): \(error)")
                    }
                }
            }
            return try await group.reduce(into: [Int: StationShardBook]()) { $0[$1.0] = $1.1 }
        }
        return BikeJob.ShardSet(hosts: hosts, books: (0..<layout.count).compactMap { books[$0] })
    }

    /// How this node's run of `job` in `epoch` commits its changes: true once a batch is
    /// committed and applied as it was made.
    func replica(of job: String, epoch: Int, shards: BikeJob.ShardSet? = nil, startedAt: Double? = nil) -> BikeJob.Replica {
        let id = Self.group(of: job)
        let host = host
        let system = groups.system
        return BikeJob.Replica(epoch: epoch, shards: shards, startedAt: startedAt) { events in
            do {
                let commit = try await host.propose(group: id, command: BikeJobMachine.record(events, epoch: epoch), forward: false)
                guard commit.result == BikeJobMachine.applied else {
                    system.log("job \(job): its replicas did not take this node's changes (\(commit.result)); the group's leader runs it")
                    return false
                }
                return true
            } catch {
                system.log("job \(job): cannot commit its changes here (\(error)); the group's leader runs it")
                return false
            }
        }
    }

    /// Where each shard of `layout` is hosted: on its first host while that is alive (so a
    /// take-over moves only the lost host's shards), else on its alive replica that hosts
    /// the fewest shards so far (the first such in its list). Throws when a shard has no
    /// alive replica.
    static func hosts(for layout: [[String]], alive: [NodeID], job: String) throws(JobGroups.ReplicationFailure) -> [NodeID] {
        let candidates = layout.map { replicas in replicas.compactMap { name in alive.first { $0.name == name } } }
        var hosts: [NodeID?] = candidates.indices.map { shard in candidates[shard].first { $0.name == layout[shard].first } }
        for shard in layout.indices where hosts[shard] == nil {
            let load = { (node: NodeID) in hosts.count { $0 == node } }
            guard let host = candidates[shard].min(by: { load($0) < load($1) }) else {
                throw JobGroups.ReplicationFailure(job: job, reason: "no replica of station shard \(shard) is alive (\(layout[shard].joined(separator: ", ")))")
            }
            hosts[shard] = host
        }
        return hosts.compactMap { $0 }
    }

    /// Whether this node leads `job`'s group (only its leader may start the job's next epoch).
    public func leads(_ job: String) async -> Bool {
        await host.status(of: Self.group(of: job))?.role == .leader
    }

    /// Whether `job` is kept by replicas (so a cancellation and its end are committed).
    /// Whether this node holds a replica of `job`'s group (``JobGroups/holds(_:)``).
    public func holdsReplica(of job: String) async -> Bool {
        await groups.holds(Self.group(of: job))
    }

    private func isReplicated(_ job: String) -> Bool {
        host.groupIDs.contains(Self.group(of: job))
    }

    /// Commits `job`'s cancellation before its run stops, so whoever takes it over runs
    /// none of its users (within the proposal timeout; a node that cannot is not the leader).
    /// False when it could not be committed here (this node does not lead the job's group
    /// any more): the run stops and stores nothing.
    public func jobCancelled(_ job: String, reason: String) async -> Bool {
        guard isReplicated(job) else { return true }
        return await groups.commitHere(BikeJobMachine.cancel(reason), to: Self.group(of: job), for: job, what: "cancellation")
    }

    /// Commits that `job`'s report is stored: its group is removed from every replica later.
    public func jobFinished(_ job: String) async {
        guard isReplicated(job) else { return }
        _ = try? await host.propose(group: Self.group(of: job), command: BikeJobMachine.finish, forward: false)
    }

    /// A job held here that has not finished and that no alive node runs yet (its
    /// coordinator died and the take-over has not begun), or that this node leads.
    public struct Held: Sendable {
        public var job: BikeJob
        public var book: BikeJobBook
        /// Why it cannot go on now, when it cannot (too few of its replicas can take part).
        public var stalled: String?
    }

    /// The unfinished jobs held here whose leader is not an alive member (it died, and the
    /// election has not ended), or is this node (it takes the job over now).
    public func heldUnfinished() async -> [Held] {
        await groups.heldWithoutOtherLeader(kind: Self.groupKind).compactMap { held in
            guard let machine = held.machine as? BikeJobMachine, let job = machine.job, let book = machine.book, !machine.finished else { return nil }
            return Held(job: job, book: book, stalled: held.stalled)
        }
    }

    /// Watches the bike job groups this node holds (``JobGroups/watch(kind:job:isRunning:abandon:takeOver:)``):
    /// where this replica leads a job that has not finished and `service` does not run
    /// it, `service` takes it over from the committed book.
    public func watch(_ service: JobService) -> Task<Void, Never> {
        groups.watch(
            kind: Self.groupKind,
            // A cancellation committed with no job before it (a refused start): nothing to run.
            job: { _, machine in
                (machine as? BikeJobMachine).map { JobGroups.JobState(job: $0.job?.id, finished: $0.finished || ($0.job == nil && $0.cancelReason != nil)) }
            },
            isRunning: { job in await service.whenLocal { $0.isRunning(job) } ?? true },
            abandon: { job in await service.whenLocal { $0.abandon(job) } },
            takeOver: { machine, _ in
                guard let job = (machine as? BikeJobMachine)?.job, let next = await self.nextEpoch(of: job.id) else { return }
                await service.whenLocal { await $0.resume(job, book: next.book, replica: next.replica, cancelReason: next.cancelReason) }
            })
    }

    /// What a run of a job in its next epoch starts from.
    public struct NextEpoch: Sendable {
        public var book: BikeJobBook
        public var replica: BikeJob.Replica
        public var cancelReason: String?
    }

    /// Starts `job`'s next epoch here (this node leads its group): commits the epoch, so
    /// no change of an earlier coordinator (or of an earlier run here) can apply after the
    /// book the new run starts from, and opens a sharded job's shards in it. Nil when this
    /// node cannot (it does not lead the group, the job finished, a shard has no alive
    /// replica): a later try, here or on the group's next leader, goes on.
    public func nextEpoch(of job: String) async -> NextEpoch? {
        let id = Self.group(of: job)
        guard let current = await host.stateMachine(of: id) as? BikeJobMachine, let spec = current.job else { return nil }
        // Every shard needs an alive replica to host it; until then the epoch is not spent.
        if let layout = current.shards, (try? Self.hosts(for: layout, alive: [groups.system.node] + groups.aliveMembers.map(\.node), job: job)) == nil {
            return nil
        }
        let epoch = current.epoch + 1
        guard let commit = try? await host.propose(group: id, command: BikeJobMachine.takeOver(epoch: epoch), forward: false),
              commit.result == BikeJobMachine.applied,
              let machine = await host.stateMachine(of: id) as? BikeJobMachine, machine.epoch == epoch,
              let book = machine.book, !machine.finished
        else { return nil }
        var replica = replica(of: job, epoch: epoch, startedAt: machine.startedAt)
        if let layout = machine.shards {
            do {
                replica.shards = try await openShards(of: spec, layout: layout, epoch: epoch)
            } catch {
                groups.system.log("job \(job): cannot start epoch \(epoch): \(error)")
                return nil
            }
        }
        return NextEpoch(book: book, replica: replica, cancelReason: machine.cancelReason)
    }
}
