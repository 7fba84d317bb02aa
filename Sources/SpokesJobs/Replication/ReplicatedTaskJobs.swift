import FoundationEssentials
import SpokesCluster
import SpokesConcurrency
import SpokesConsensus
import SpokesReplication
import Synchronization

/// Keeps a node's running jobs of tasks on three nodes, so the job outlives its
/// coordinator (issue 19): each job is a Raft group `taskjob-ID` of the coordinator and
/// two alive members, its state a ``TaskJobMachine``. The job's spec
/// is committed (on a majority's disk) before its submitter hears it started; task ends
/// are committed as they come, in batches; `finished` once its report is stored.
///
/// Every replica watches the job groups it holds (``watch(_:)``): one that leads a job
/// nobody here runs and that has not finished takes it over, running the tasks with no
/// committed end. The coordinator that loses the lead (it died and came back, or was cut
/// off: Raft's terms fence it) cannot commit any more ends: its run stops and stores
/// nothing. So a task's result counts once, whichever node ran it.
///
/// A cluster of one or two nodes keeps its jobs on the coordinator's disk (`fallback`):
/// a group of two replicas would stop every job at the death of either node (a majority
/// of two is both), so a worker's crash would cost the job; with the journal it costs
/// retries, and a restarted coordinator runs the job on.
public final class ReplicatedTaskJobs: TaskJobDurability {
    /// The kind of job groups, for ``RaftHost``'s machine factories.
    public static let groupKind = "taskjob"

    /// The group of `job`.
    public static func group(of job: String) -> String { groupKind + "-" + job }

    /// The machine factories a host needs for job groups.
    public static var machines: [String: @Sendable () -> any ReplicatedStateMachine] { [groupKind: { TaskJobMachine() }] }

    private let groups: JobGroups
    private var host: RaftHost { groups.host }
    private var system: ClusterSystem { groups.system }
    private let fallback: TaskJobJournal?
    /// Jobs this node has had replicated (it coordinated or took them over): once their
    /// group is gone, they are no longer this node's to record.
    private let replicatedJobs = Mutex<Set<String>>([])

    /// `members` are the node's members now (the node passes them, weakly held).
    public init(host: RaftHost, system: ClusterSystem, members: @escaping @Sendable () -> [Member], fallback: TaskJobJournal?) {
        groups = JobGroups(host: host, system: system, members: members)
        self.fallback = fallback
    }

    public func jobStarted(_ spec: TaskJobSpec) async throws {
        guard let peers = groups.replicaPeers() else {
            try await fallback?.jobStarted(spec)
            return
        }
        try await groups.open(
            Self.group(of: spec.id), for: spec.id, with: peers, machine: TaskJobMachine(), first: TaskJobMachine.start(spec),
            cancel: TaskJobMachine.cancel("refused: its start was not committed in time"))
        replicatedJobs.withLock { _ = $0.insert(spec.id) }
    }

    public func tasksEnded(_ ends: [(task: Int, end: TaskJobReport.TaskEnd)], of job: String) async -> Bool {
        guard isReplicated(job) else {
            // A replicated job whose group is gone (it finished elsewhere) is not ours.
            if replicatedJobs.withLock({ $0.contains(job) }) { return false }
            return await fallback?.tasksEnded(ends, of: job) ?? true
        }
        do {
            for command in Self.endCommands(ends) {
                _ = try await host.propose(group: Self.group(of: job), command: command, forward: false)
            }
            return true
        } catch {
            // Not the leader any more, or cut off from the majority: the leader takes the job
            // over from what was committed (this node too, if it still leads: see watch).
            system.log("job \(job): cannot commit task ends here (\(error)); the group's leader runs it")
            return false
        }
    }

    /// At most about this many bytes of task outputs in one command: a batch of large
    /// outputs goes in several entries, each of which fits a frame on its way to the
    /// followers (review, issue 29 §1.5: one entry of many 2 MiB outputs wedged its group).
    static let maximumEndBytesPerCommand = 1 << 20

    /// The commands that record `ends`, in order, each within ``maximumEndBytesPerCommand``
    /// (one end always goes).
    static func endCommands(_ ends: [(task: Int, end: TaskJobReport.TaskEnd)]) -> [String] {
        var commands: [String] = []
        var batch: [TaskJobMachine.Ended] = []
        var bytes = 0
        for (task, end) in ends {
            let size = 64 + (end.output?.utf8.count ?? 0) + end.failures.reduce(0) { $0 + 64 + $1.reason.utf8.count }
            if !batch.isEmpty, bytes + size > maximumEndBytesPerCommand {
                commands.append(TaskJobMachine.ended(batch))
                batch = []
                bytes = 0
            }
            batch.append(TaskJobMachine.Ended(task: task, end: end))
            bytes += size
        }
        if !batch.isEmpty { commands.append(TaskJobMachine.ended(batch)) }
        return commands
    }

    /// Commits the cancellation (within the proposal timeout); false when it could not be
    /// committed here (this node does not lead the job's group any more).
    public func jobCancelled(_ job: String, reason: String) async -> Bool {
        guard isReplicated(job) else { return true }
        return await groups.commitHere(TaskJobMachine.cancel(reason), to: Self.group(of: job), for: job, what: "cancellation")
    }

    public func jobFinished(_ job: String) async {
        guard isReplicated(job) else {
            await fallback?.jobFinished(job)
            return
        }
        _ = try? await host.propose(group: Self.group(of: job), command: TaskJobMachine.finish, forward: false)
    }

    /// The unfinished jobs held here whose leader is not an alive member (it died, and the
    /// election has not ended), or is this node (it takes the job over now).
    public func heldUnfinished() async -> [TaskJobJournal.Unfinished] {
        await groups.heldWithoutOtherLeader(kind: Self.groupKind).compactMap { held in
            guard let machine = held.machine as? TaskJobMachine, let spec = machine.spec, !machine.finished else { return nil }
            return TaskJobJournal.Unfinished(spec: spec, ends: machine.ends, cancelReason: machine.cancelReason, stalled: held.stalled)
        }
    }

    public func holdsReplica(of job: String) async -> Bool {
        await groups.holds(Self.group(of: job))
    }

    public func keptEnds(of job: String) async -> [Int: TaskJobReport.TaskEnd]? {
        guard isReplicated(job) else { return replicatedJobs.withLock({ $0.contains(job) }) ? [:] : nil }
        return (await host.stateMachine(of: Self.group(of: job)) as? TaskJobMachine)?.ends
    }

    /// Watches the job groups this node holds (``JobGroups/watch(kind:job:isRunning:abandon:takeOver:)``):
    /// where this replica leads a job that has not finished and `desk` does not run it,
    /// `desk` takes it over.
    public func watch(_ desk: TaskJobs) -> Task<Void, Never> {
        groups.watch(
            kind: Self.groupKind,
            // A cancellation committed with no spec before it (a start that was refused)
            // leaves nothing to run, ever: the spec can only have come first.
            job: { _, machine in
                (machine as? TaskJobMachine).map { JobGroups.JobState(job: $0.spec?.id, finished: $0.finished || ($0.spec == nil && $0.cancelReason != nil)) }
            },
            isRunning: { job in await desk.whenLocal { $0.isRunning(job) } ?? true },
            abandon: { job in await desk.whenLocal { $0.abandon(job) } },
            takeOver: { machine, _ in
                guard let machine = machine as? TaskJobMachine, let spec = machine.spec else { return }
                self.replicatedJobs.withLock { _ = $0.insert(spec.id) }
                try? await desk.whenLocal { try await $0.resume(spec, ended: machine.ends, cancelReason: machine.cancelReason) }
            })
    }

    /// Whether `job` is kept in a group of replicas (else in the journal: the cluster was
    /// too small when it started, or it was resumed from the journal after a restart).
    private func isReplicated(_ job: String) -> Bool {
        host.groupIDs.contains(Self.group(of: job))
    }

    public typealias ReplicationFailure = JobGroups.ReplicationFailure
}
