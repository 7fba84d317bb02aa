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
/// upgrade), a job goes in the group an earlier release reads, which its members can
/// hold (``JobGroupFormat``: `taskjob-ID` for a job of tasks alone, a workload's own
/// older format); groups earlier releases made are taken over and finished here. Only
/// the group's text differs: the desk runs every job the same way.
public final class ReplicatedTaskJobs: TaskJobDurability {
    /// The kind of this release's job groups.
    public static let groupKind = JobGroupFormat.jobsKind
    /// The kind of the groups releases before protocol 7 kept jobs of tasks in.
    public static let tasksGroupKind = JobGroupFormat.tasks.kind

    /// The group of `job`.
    public static func group(of job: String) -> String { groupKind + "-" + job }

    /// The group of `job`, a job of tasks alone kept as releases before protocol 7 kept it.
    public static func tasksGroup(of job: String) -> String { JobGroupFormat.tasks.group(of: job) }

    /// Every format a node reads, this release's first (those of `workloads` too).
    static func formats(workloads: JobWorkloads) -> [JobGroupFormat] {
        [JobGroupFormat.jobs(workloads: workloads), JobGroupFormat.tasks] + workloads.olderFormats
    }

    /// The machine factories a host needs for job groups (those of `workloads` too).
    public static func machines(workloads: JobWorkloads) -> [String: @Sendable () -> any ReplicatedStateMachine] {
        Dictionary(formats(workloads: workloads).map { ($0.kind, $0.machine) }) { first, _ in first }
    }

    /// The machine factories a host needs for groups of jobs of tasks alone.
    public static var machines: [String: @Sendable () -> any ReplicatedStateMachine] { machines(workloads: JobWorkloads()) }

    private let groups: JobGroups
    private var host: RaftHost { groups.host }
    private var system: ClusterSystem { groups.system }
    private let fallback: TaskJobJournal?
    /// This release's format first, then those of earlier releases.
    private let formats: [JobGroupFormat]
    /// Whether every member speaks protocol 7, so a job goes in a `job-` group (else in a
    /// format of the release before).
    private let usesJobGroups: @Sendable () -> Bool
    /// Jobs this node has had replicated (it coordinated or took them over): once their
    /// group is gone, they are no longer this node's to record.
    private let replicatedJobs = Mutex<Set<String>>([])

    /// `members` are the node's members now (the node passes them, weakly held).
    /// `workloads`: those whose jobs' groups this node opens (its host's machines must be
    /// ``machines(workloads:)`` of the same). `usesJobGroups`: whether every member speaks
    /// protocol 7 (``ProtocolVersions/oneJobLayer``; a node passes its
    /// `mayUse(protocolVersion:)`); true by default, a cluster of this release.
    public init(
        host: RaftHost, system: ClusterSystem, members: @escaping @Sendable () -> [Member], fallback: TaskJobJournal?,
        workloads: JobWorkloads = JobWorkloads(), usesJobGroups: @escaping @Sendable () -> Bool = { true }
    ) {
        groups = JobGroups(host: host, system: system, members: members)
        self.fallback = fallback
        formats = Self.formats(workloads: workloads)
        self.usesJobGroups = usesJobGroups
    }

    /// The format a new job of `spec` goes in: this release's once every member speaks 7
    /// (or for a group of this node alone, when this node may speak 7 itself: one held to
    /// the release before's protocols writes what that release reads, since a replica
    /// added later may be of it; `simulate-cluster --scenario upgrade --nodes 3`, seed 1),
    /// else the first earlier one that keeps it.
    private func format(for spec: TaskJobSpec, alone: Bool) -> JobGroupFormat {
        let speaks7 = system.settings.protocolVersions.highest >= ProtocolVersions.oneJobLayer
        if (alone && speaks7) || usesJobGroups() { return formats[0] }
        return formats.dropFirst().first { $0.keeps(spec) } ?? formats[0]
    }

    /// `job`'s group here and its format, if this node holds one.
    private func group(of job: String) -> (id: String, format: JobGroupFormat)? {
        let ids = host.groupIDs
        return formats.lazy.map { ($0.group(of: job), $0) }.first { ids.contains($0.0) }
    }

    public func jobStarted(_ spec: TaskJobSpec) async throws {
        let peers = groups.replicaPeers()
        // A job of tasks alone without peers is kept on this node's disk; a workload's, in
        // a group of this node alone (the journal keeps no workload's state).
        if peers == nil, spec.workload == nil, let fallback {
            try await fallback.jobStarted(spec)
            return
        }
        let format = format(for: spec, alone: peers == nil)
        try await groups.open(
            format.group(of: spec.id), for: spec.id, with: peers ?? [], machine: format.machine(), first: try format.start(spec),
            cancel: format.cancel("refused: its start was not committed in time"))
        replicatedJobs.withLock { _ = $0.insert(spec.id) }
    }

    public func streamed(epoch: Int, events: [String], ends: [(task: Int, end: TaskJobReport.TaskEnd)], of job: String) async -> Bool {
        guard let (id, format) = group(of: job) else {
            // A replicated job whose group is gone (it finished elsewhere) is not ours.
            if replicatedJobs.withLock({ $0.contains(job) }) { return false }
            return await fallback?.streamed(epoch: epoch, events: events, ends: ends, of: job) ?? events.isEmpty
        }
        for command in format.batch(epoch, events, ends.map { JobMachine.Ended(task: $0.task, end: $0.end) }) {
            do {
                let commit = try await host.propose(group: id, command: command, forward: false)
                guard commit.result == JobGroupFormat.applied else {
                    system.log("job \(job): its replicas did not take this node's changes (\(commit.result)); the group's leader runs it")
                    return false
                }
            } catch {
                // Not the leader any more, or cut off from the majority: the leader takes the
                // job over from what was committed (this node too, if it still leads: see watch).
                system.log("job \(job): cannot commit its changes here (\(error)); the group's leader runs it")
                return false
            }
        }
        return true
    }

    /// Commits the cancellation (within the proposal timeout); false when it could not be
    /// committed here (this node does not lead the job's group any more).
    public func jobCancelled(_ job: String, reason: String) async -> Bool {
        guard let (id, format) = group(of: job) else { return true }
        return await groups.commitHere(format.cancel(reason), to: id, for: job, what: "cancellation")
    }

    public func jobFinished(_ job: String) async {
        guard let (id, format) = group(of: job) else {
            await fallback?.jobFinished(job)
            return
        }
        _ = try? await host.propose(group: id, command: format.finish, forward: false)
    }

    /// The unfinished jobs held here whose leader is not an alive member (it died, and the
    /// election has not ended), or is this node (it takes the job over now).
    public func heldUnfinished() async -> [TaskJobJournal.Unfinished] {
        let settings = system.settings
        var unfinished: [TaskJobJournal.Unfinished] = []
        for format in formats {
            for held in await groups.heldWithoutOtherLeader(kind: format.kind) {
                guard let job = format.read(held.machine, settings), let spec = job.spec, !job.finished else { continue }
                unfinished.append(TaskJobJournal.Unfinished(spec: spec, ends: job.ends, cancelReason: job.cancelReason, stalled: held.stalled))
            }
        }
        return unfinished
    }

    public func holdsReplica(of job: String) async -> Bool {
        for format in formats where await groups.holds(format.group(of: job)) { return true }
        return false
    }

    public func keptEnds(of job: String) async -> [Int: TaskJobReport.TaskEnd]? {
        guard let (id, format) = group(of: job) else { return replicatedJobs.withLock({ $0.contains(job) }) ? [:] : nil }
        guard let machine = await host.stateMachine(of: id) else { return nil }
        return format.read(machine, system.settings)?.ends
    }

    /// Watches the job groups this node holds, of every format (``JobGroups/watch(kind:job:isRunning:abandon:takeOver:)``):
    /// where this replica leads a job that has not finished and `desk` does not run it,
    /// `desk` takes it over: in the next epoch (``nextEpoch(of:)``), from the state
    /// committed before it.
    public func watch(_ desk: TaskJobs) -> Task<Void, Never> {
        let watchers = formats.map { format in
            groups.watch(
                kind: format.kind, job: { _, machine in format.glance(machine) },
                isRunning: { job in await desk.whenLocal { $0.isRunning(job) } ?? true },
                abandon: { job in await desk.whenLocal { $0.abandon(job) } },
                takeOver: { machine, _ in
                    guard let job = format.glance(machine)?.job, let next = await self.nextEpoch(of: job), let spec = next.spec else { return }
                    self.replicatedJobs.withLock { _ = $0.insert(spec.id) }
                    try? await desk.whenLocal {
                        try await $0.resume(spec, ended: next.ends, cancelReason: next.cancelReason, epoch: next.epoch, state: next.workloadState)
                    }
                })
        }
        return Task {
            await withTaskCancellationHandler {
                for watcher in watchers { await watcher.value }
            } onCancel: {
                for watcher in watchers { watcher.cancel() }
            }
        }
    }

    /// Starts `job`'s next epoch here (this node leads its group): commits the epoch, so
    /// no batch of an earlier coordinator (or of an earlier run here) can apply after the
    /// state the new run starts from, and returns that state. Nil when this node cannot
    /// (it does not lead the group, the job finished): a later try, here or on the group's
    /// next leader, goes on. A format without epochs runs on from its state as it is.
    func nextEpoch(of job: String) async -> JobGroupState? {
        let settings = system.settings
        guard let (id, format) = group(of: job), let machine = await host.stateMachine(of: id),
              let current = format.read(machine, settings), current.spec != nil
        else { return nil }
        if let takeOver = format.takeOver {
            guard let commit = try? await host.propose(group: id, command: takeOver(current.epoch + 1), forward: false),
                  commit.result == JobGroupFormat.applied
            else { return nil }
        }
        guard let machine = await host.stateMachine(of: id), let next = format.read(machine, settings), !next.finished,
              format.takeOver == nil || next.epoch == current.epoch + 1
        else { return nil }
        return next
    }

    public typealias ReplicationFailure = JobGroups.ReplicationFailure
}
