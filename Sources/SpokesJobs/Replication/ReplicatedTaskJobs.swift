import FoundationEssentials
import SpokesCluster
import SpokesConcurrency
import SpokesConsensus
import SpokesReplication
import Synchronization

/// Keeps a node's running jobs on three nodes, so the job outlives its coordinator
/// (issue 19): each job is a Raft group `job-ID` of the coordinator and two alive
/// members, its state a ``JobMachine`` (Docs/one-job-layer.md). The job's spec is
/// committed (on a majority's disk) before its submitter hears it started; the
/// coordinator's stream (its workload's events, task ends) is committed as it comes, in
/// batches, under the coordinator's epoch; `finished` once its report is stored.
///
/// Every replica watches the job groups it holds (``watch(_:)``): one that leads a job
/// nobody here runs and that has not finished takes it over: it commits the next epoch,
/// then runs the tasks with no committed end, from the workload's committed state. The
/// coordinator that loses the lead (it died and came back, or was cut off: Raft's terms
/// fence it) or its epoch cannot commit any more: its run stops and stores nothing. So a
/// task's result counts once, whichever node ran it.
///
/// A cluster of one or two nodes keeps its jobs on the coordinator's disk (`fallback`):
/// a group of two replicas would stop every job at the death of either node (a majority
/// of two is both), so a worker's crash would cost the job; with the journal it costs
/// retries, and a restarted coordinator runs the job on. A workload's job
/// (``TaskJobSpec/workload``) is then a group of the coordinator alone: the journal keeps
/// no workload's state.
///
/// Until every member speaks protocol 7 (``ProtocolVersions/oneJobLayer``, a rolling
/// upgrade), a job of tasks alone goes in a `taskjob-ID` group (``TaskJobMachine``) as
/// the release before kept it, which its members can hold; such groups made earlier run
/// on as they were (fenced by Raft's terms alone).
public final class ReplicatedTaskJobs: TaskJobDurability {
    /// The kind of job groups, for ``RaftHost``'s machine factories.
    public static let groupKind = "job"
    /// The kind of the groups releases before protocol 7 kept jobs of tasks in.
    public static let tasksGroupKind = "taskjob"

    /// The group of `job`.
    public static func group(of job: String) -> String { groupKind + "-" + job }

    /// The group of `job`, a job of tasks alone kept as releases before protocol 7 kept it.
    public static func tasksGroup(of job: String) -> String { tasksGroupKind + "-" + job }

    /// The machine factories a host needs for job groups (those of `workloads` too).
    public static func machines(workloads: JobWorkloads) -> [String: @Sendable () -> any ReplicatedStateMachine] {
        [groupKind: { JobMachine(workloads: workloads) }, tasksGroupKind: { TaskJobMachine() }]
    }

    /// The machine factories a host needs for groups of jobs of tasks alone.
    public static var machines: [String: @Sendable () -> any ReplicatedStateMachine] { machines(workloads: JobWorkloads()) }

    private let groups: JobGroups
    private var host: RaftHost { groups.host }
    private var system: ClusterSystem { groups.system }
    private let fallback: TaskJobJournal?
    private let workloads: JobWorkloads
    /// Whether every member speaks protocol 7, so a job of tasks alone goes in a `job-`
    /// group (else in a `taskjob-` group).
    private let usesJobGroups: @Sendable () -> Bool
    /// Jobs this node has had replicated (it coordinated or took them over): once their
    /// group is gone, they are no longer this node's to record.
    private let replicatedJobs = Mutex<Set<String>>([])

    /// `members` are the node's members now (the node passes them, weakly held).
    /// `workloads`: those whose jobs' groups this node opens (its host's `job` machines
    /// must know the same). `usesJobGroups`: whether every member speaks protocol 7
    /// (``ProtocolVersions/oneJobLayer``; a node passes its `mayUse(protocolVersion:)`);
    /// true by default, a cluster of this release.
    public init(
        host: RaftHost, system: ClusterSystem, members: @escaping @Sendable () -> [Member], fallback: TaskJobJournal?,
        workloads: JobWorkloads = JobWorkloads(), usesJobGroups: @escaping @Sendable () -> Bool = { true }
    ) {
        groups = JobGroups(host: host, system: system, members: members)
        self.fallback = fallback
        self.workloads = workloads
        self.usesJobGroups = usesJobGroups
    }

    public func jobStarted(_ spec: TaskJobSpec) async throws {
        let refused = "refused: its start was not committed in time"
        let peers = groups.replicaPeers()
        if spec.workload != nil || (peers != nil && usesJobGroups()) {
            try await groups.open(
                Self.group(of: spec.id), for: spec.id, with: peers ?? [], machine: JobMachine(workloads: workloads),
                first: JobMachine.start(spec, startedAt: spec.startedAt), cancel: JobMachine.cancel(refused))
        } else if let peers {
            try await groups.open(
                Self.tasksGroup(of: spec.id), for: spec.id, with: peers, machine: TaskJobMachine(), first: TaskJobMachine.start(spec),
                cancel: TaskJobMachine.cancel(refused))
        } else {
            try await fallback?.jobStarted(spec)
            return
        }
        replicatedJobs.withLock { _ = $0.insert(spec.id) }
    }

    public func streamed(epoch: Int, events: String?, ends: [(task: Int, end: TaskJobReport.TaskEnd)], of job: String) async -> Bool {
        let ids = host.groupIDs
        if ids.contains(Self.group(of: job)) { return await commitBatch(epoch: epoch, events: events, ends: ends, of: job) }
        if ids.contains(Self.tasksGroup(of: job)), events == nil { return await commitEnds(ends, of: job) }
        // A replicated job whose group is gone (it finished elsewhere) is not ours.
        if replicatedJobs.withLock({ $0.contains(job) }) { return false }
        return await fallback?.streamed(epoch: epoch, events: events, ends: ends, of: job) ?? (events == nil)
    }

    /// Commits `ends` to `job`'s `taskjob-` group (a job a release before protocol 7 kept,
    /// or started while a member did not speak it).
    private func commitEnds(_ ends: [(task: Int, end: TaskJobReport.TaskEnd)], of job: String) async -> Bool {
        do {
            for command in Self.endCommands(ends) {
                _ = try await host.propose(group: Self.tasksGroup(of: job), command: command, forward: false)
            }
            return true
        } catch {
            // Not the leader any more, or cut off from the majority: the leader takes the job
            // over from what was committed (this node too, if it still leads: see watch).
            system.log("job \(job): cannot commit task ends here (\(error)); the group's leader runs it")
            return false
        }
    }

    /// Commits one batch of `job`'s stream to its `job-` group, in the coordinator's
    /// `epoch`: refused (false) once another run took the job over.
    private func commitBatch(epoch: Int, events: String?, ends: [(task: Int, end: TaskJobReport.TaskEnd)], of job: String) async -> Bool {
        let id = Self.group(of: job)
        // The ends in bounded commands, the events with the first: one batch of the stream
        // may take several entries, each applied whole and in order.
        var commands = Self.endBatches(ends).enumerated().map { index, batch in
            JobMachine.batch(epoch: epoch, events: index == 0 ? events : nil, ends: batch)
        }
        if commands.isEmpty { commands = [JobMachine.batch(epoch: epoch, events: events, ends: [])] }
        for command in commands {
            do {
                let commit = try await host.propose(group: id, command: command, forward: false)
                guard commit.result == JobMachine.applied else {
                    system.log("job \(job): its replicas did not take this node's changes (\(commit.result)); the group's leader runs it")
                    return false
                }
            } catch {
                system.log("job \(job): cannot commit its changes here (\(error)); the group's leader runs it")
                return false
            }
        }
        return true
    }

    /// At most about this many bytes of task outputs in one command: a batch of large
    /// outputs goes in several entries, each of which fits a frame on its way to the
    /// followers (review, issue 29 §1.5: one entry of many 2 MiB outputs wedged its group).
    static let maximumEndBytesPerCommand = 1 << 20

    /// The commands that record `ends`, in order, each within ``maximumEndBytesPerCommand``
    /// (one end always goes).
    static func endCommands(_ ends: [(task: Int, end: TaskJobReport.TaskEnd)]) -> [String] {
        endBatches(ends).map { batch in TaskJobMachine.ended(batch.map { TaskJobMachine.Ended(task: $0.task, end: $0.end) }) }
    }

    /// `ends` in order, in batches of at most about ``maximumEndBytesPerCommand`` (one end
    /// always goes).
    static func endBatches(_ ends: [(task: Int, end: TaskJobReport.TaskEnd)]) -> [[JobMachine.Ended]] {
        var batches: [[JobMachine.Ended]] = []
        var batch: [JobMachine.Ended] = []
        var bytes = 0
        for (task, end) in ends {
            let size = 64 + (end.output?.utf8.count ?? 0) + end.failures.reduce(0) { $0 + 64 + $1.reason.utf8.count }
            if !batch.isEmpty, bytes + size > maximumEndBytesPerCommand {
                batches.append(batch)
                batch = []
                bytes = 0
            }
            batch.append(JobMachine.Ended(task: task, end: end))
            bytes += size
        }
        if !batch.isEmpty { batches.append(batch) }
        return batches
    }

    /// Commits the cancellation (within the proposal timeout); false when it could not be
    /// committed here (this node does not lead the job's group any more).
    public func jobCancelled(_ job: String, reason: String) async -> Bool {
        guard let id = groupID(of: job) else { return true }
        let command = id == Self.tasksGroup(of: job) ? TaskJobMachine.cancel(reason) : JobMachine.cancel(reason)
        return await groups.commitHere(command, to: id, for: job, what: "cancellation")
    }

    public func jobFinished(_ job: String) async {
        guard let id = groupID(of: job) else {
            await fallback?.jobFinished(job)
            return
        }
        let command = id == Self.tasksGroup(of: job) ? TaskJobMachine.finish : JobMachine.finish
        _ = try? await host.propose(group: id, command: command, forward: false)
    }

    /// The unfinished jobs held here whose leader is not an alive member (it died, and the
    /// election has not ended), or is this node (it takes the job over now).
    public func heldUnfinished() async -> [TaskJobJournal.Unfinished] {
        let tasks = await groups.heldWithoutOtherLeader(kind: Self.tasksGroupKind).compactMap { held -> TaskJobJournal.Unfinished? in
            guard let machine = held.machine as? TaskJobMachine, let spec = machine.spec, !machine.finished else { return nil }
            return TaskJobJournal.Unfinished(spec: spec, ends: machine.ends, cancelReason: machine.cancelReason, stalled: held.stalled)
        }
        let jobs = await groups.heldWithoutOtherLeader(kind: Self.groupKind).compactMap { held -> TaskJobJournal.Unfinished? in
            guard let machine = held.machine as? JobMachine, let spec = machine.spec, !machine.finished else { return nil }
            return TaskJobJournal.Unfinished(spec: spec, ends: machine.ends, cancelReason: machine.cancelReason, stalled: held.stalled)
        }
        return jobs + tasks
    }

    public func holdsReplica(of job: String) async -> Bool {
        if await groups.holds(Self.group(of: job)) { return true }
        return await groups.holds(Self.tasksGroup(of: job))
    }

    public func keptEnds(of job: String) async -> [Int: TaskJobReport.TaskEnd]? {
        guard let id = groupID(of: job) else { return replicatedJobs.withLock({ $0.contains(job) }) ? [:] : nil }
        let machine = await host.stateMachine(of: id)
        return (machine as? TaskJobMachine)?.ends ?? (machine as? JobMachine)?.ends
    }

    /// Watches the job groups this node holds (``JobGroups/watch(kind:job:isRunning:abandon:takeOver:)``):
    /// where this replica leads a job that has not finished and `desk` does not run it,
    /// `desk` takes it over.
    public func watch(_ desk: TaskJobs) -> Task<Void, Never> {
        let watchers = [watchJobs(desk), watchTasks(desk)]
        return Task {
            await withTaskCancellationHandler {
                for watcher in watchers { await watcher.value }
            } onCancel: {
                for watcher in watchers { watcher.cancel() }
            }
        }
    }

    /// The watcher of `taskjob` groups (jobs of tasks alone, kept as before protocol 7).
    private func watchTasks(_ desk: TaskJobs) -> Task<Void, Never> {
        watch(kind: Self.tasksGroupKind, for: desk, state: { machine in
            (machine as? TaskJobMachine).map { Self.state(spec: $0.spec, finished: $0.finished, cancelReason: $0.cancelReason) }
        }) { machine in
            guard let machine = machine as? TaskJobMachine, let spec = machine.spec else { return }
            self.replicatedJobs.withLock { _ = $0.insert(spec.id) }
            try? await desk.whenLocal { try await $0.resume(spec, ended: machine.ends, cancelReason: machine.cancelReason) }
        }
    }

    /// The watcher of `job` groups: a take-over first commits the next epoch
    /// (``nextEpoch(of:)``), then runs the job from the state committed before it.
    private func watchJobs(_ desk: TaskJobs) -> Task<Void, Never> {
        watch(kind: Self.groupKind, for: desk, state: { machine in
            (machine as? JobMachine).map { Self.state(spec: $0.spec, finished: $0.finished, cancelReason: $0.cancelReason) }
        }) { machine in
            guard let spec = (machine as? JobMachine)?.spec, let next = await self.nextEpoch(of: spec.id) else { return }
            self.replicatedJobs.withLock { _ = $0.insert(spec.id) }
            try? await desk.whenLocal {
                try await $0.resume(spec, ended: next.ends, cancelReason: next.cancelReason, epoch: next.epoch, state: next.state)
            }
        }
    }

    /// Watches this node's groups of `kind` for `desk` (``JobGroups/watch(kind:job:isRunning:abandon:takeOver:)``):
    /// `state` reads a group's job, `takeOver` runs it here.
    private func watch(
        kind: String, for desk: TaskJobs, state: @escaping @Sendable (any ReplicatedStateMachine) -> JobGroups.JobState?,
        takeOver: @escaping @Sendable (any ReplicatedStateMachine) async -> Void
    ) -> Task<Void, Never> {
        groups.watch(
            kind: kind, job: { _, machine in state(machine) },
            isRunning: { job in await desk.whenLocal { $0.isRunning(job) } ?? true },
            abandon: { job in await desk.whenLocal { $0.abandon(job) } },
            takeOver: { machine, _ in await takeOver(machine) })
    }

    /// A group's job as the watcher sees it. A cancellation committed with no spec before
    /// it (a start that was refused) leaves nothing to run, ever: the spec can only have
    /// come first.
    private static func state(spec: TaskJobSpec?, finished: Bool, cancelReason: String?) -> JobGroups.JobState {
        JobGroups.JobState(job: spec?.id, finished: finished || (spec == nil && cancelReason != nil))
    }

    /// What a run of a job in its next epoch starts from.
    struct NextEpoch: Sendable {
        var epoch: Int
        var ends: [Int: TaskJobReport.TaskEnd]
        var state: (any JobWorkloadState)?
        var cancelReason: String?
    }

    /// Starts `job`'s next epoch here (this node leads its group): commits the epoch, so
    /// no batch of an earlier coordinator (or of an earlier run here) can apply after the
    /// state the new run starts from. Nil when this node cannot (it does not lead the
    /// group, the job finished): a later try, here or on the group's next leader, goes on.
    func nextEpoch(of job: String) async -> NextEpoch? {
        let id = Self.group(of: job)
        guard let current = await host.stateMachine(of: id) as? JobMachine, current.spec != nil else { return nil }
        let epoch = current.epoch + 1
        guard let commit = try? await host.propose(group: id, command: JobMachine.takeOver(epoch: epoch), forward: false),
              commit.result == JobMachine.applied,
              let machine = await host.stateMachine(of: id) as? JobMachine, machine.epoch == epoch, !machine.finished
        else { return nil }
        return NextEpoch(epoch: epoch, ends: machine.ends, state: machine.workloadState, cancelReason: machine.cancelReason)
    }

    /// The group `job` is kept in, if any (else in the journal: the cluster was too small
    /// when it started, or it was resumed from the journal after a restart).
    private func groupID(of job: String) -> String? {
        let ids = host.groupIDs
        return [Self.group(of: job), Self.tasksGroup(of: job)].first { ids.contains($0) }
    }

    public typealias ReplicationFailure = JobGroups.ReplicationFailure
}
