import FoundationEssentials
import SpokesCluster
import SpokesJobs
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

    /// The machine factories a host needs for bike job groups.
    public static var machines: [String: @Sendable () -> any ReplicatedStateMachine] {
        [groupKind: { BikeJobMachine() }]
    }

    private let groups: JobGroups
    private var host: RaftHost { groups.host }

    /// `members` are the node's members now (the node passes them, weakly held).
    public init(host: RaftHost, system: ClusterSystem, members: @escaping @Sendable () -> [Member]) {
        groups = JobGroups(host: host, system: system, members: members)
    }

    /// Keeps `job` on its replicas (or this node's disk alone) before it runs; returns how
    /// its run commits its changes. Throws when the replicas could not be made or the job
    /// not committed.
    public func jobStarted(_ job: BikeJob) async throws -> BikeJob.Replica {
        let peers = groups.replicaPeers() ?? []
        let startedAt = groups.system.runtime.unixNow
        try await groups.open(
            Self.group(of: job.id), for: job.id, with: peers, machine: BikeJobMachine(), first: BikeJobMachine.start(job, startedAt: startedAt),
            cancel: BikeJobMachine.cancel("refused: its start was not committed in time"))
        return replica(of: job.id, epoch: 0, startedAt: startedAt)
    }

    /// How this node's run of `job` in `epoch` commits its changes: true once a batch is
    /// committed and applied as it was made.
    func replica(of job: String, epoch: Int, startedAt: Double? = nil) -> BikeJob.Replica {
        let id = Self.group(of: job)
        let host = host
        let system = groups.system
        return BikeJob.Replica(epoch: epoch, startedAt: startedAt) { events in
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

    /// Whether this node holds a replica of `job`'s group (``JobGroups/holds(_:)``).
    public func holdsReplica(of job: String) async -> Bool {
        await groups.holds(Self.group(of: job))
    }

    /// Whether `job` is kept by replicas (so a cancellation and its end are committed).
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
    public func watch(_ service: BikeJobService) -> Task<Void, Never> {
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
    /// book the new run starts from. Nil when this node cannot (it does not lead the
    /// group, the job finished): a later try, here or on the group's next leader, goes on.
    /// A job whose stations were sharded (release 0.2 or earlier) is not run on: its
    /// cancellation is committed with why, so it ends with its users cancelled.
    public func nextEpoch(of job: String) async -> NextEpoch? {
        let id = Self.group(of: job)
        guard let current = await host.stateMachine(of: id) as? BikeJobMachine, current.job != nil else { return nil }
        if current.wasSharded, current.cancelReason == nil {
            guard await jobCancelled(job, reason: Self.shardedJobEnded) else { return nil }
        }
        let epoch = current.epoch + 1
        guard let commit = try? await host.propose(group: id, command: BikeJobMachine.takeOver(epoch: epoch), forward: false),
              commit.result == BikeJobMachine.applied,
              let machine = await host.stateMachine(of: id) as? BikeJobMachine, machine.epoch == epoch,
              let book = machine.book, !machine.finished
        else { return nil }
        return NextEpoch(book: book, replica: replica(of: job, epoch: epoch, startedAt: machine.startedAt), cancelReason: machine.cancelReason)
    }

    /// Why a job with sharded stations, taken over by this release, ends.
    static let shardedJobEnded = "its stations were sharded, which this release no longer runs (removed in 0.3): ended"
}
