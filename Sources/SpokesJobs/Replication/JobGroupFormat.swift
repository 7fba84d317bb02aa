import SpokesCluster
import SpokesReplication

/// How a job is written into its Raft group and read back (Docs/one-job-layer.md): the
/// group's kind (its id is `KIND-JOBID`), the machine a replica makes for it, the
/// commands the coordinator proposes, and the job as a leader that takes it over finds
/// it. ``ReplicatedTaskJobs`` runs every job the same way whatever its format; only the
/// text differs.
///
/// This release writes ``jobs(workloads:)`` (`job-ID`, ``JobMachine``) once every member
/// speaks protocol 7. The formats of earlier releases are kept so that a rolling upgrade
/// loses no job: while a member does not speak 7, a job goes in the group its release
/// reads (``tasks``, `taskjob-ID`, for a job of tasks alone; a workload's own, such as the
/// bike job's `bikejob-ID`), and a group an earlier release made is taken over and
/// finished by this one. They are formats only: the one desk runs the job.
public struct JobGroupFormat: Sendable {
    /// The group kind, the id's prefix.
    public var kind: String
    /// A new replica's machine.
    public var machine: @Sendable () -> any ReplicatedStateMachine
    /// Whether a job of `spec` can be kept in this format.
    public var keeps: @Sendable (_ spec: TaskJobSpec) -> Bool
    /// The group's first command: the job (``TaskJobSpec/startedAt`` with it). Throws when
    /// the spec cannot be written in this format.
    public var start: @Sendable (_ spec: TaskJobSpec) throws -> String
    /// The commands that keep one batch of the coordinator's stream, in order, each
    /// applied whole: `events` (the workload's JSON) before `ends`. Empty: nothing to keep.
    public var batch: @Sendable (_ epoch: Int, _ events: [String], _ ends: [JobMachine.Ended]) -> [String]
    /// The command a leader commits before it runs the job on, in `epoch`; nil for a
    /// format without epochs (Raft's terms alone fence its coordinators).
    public var takeOver: (@Sendable (_ epoch: Int) -> String)?
    /// The command that records a cancellation.
    public var cancel: @Sendable (_ reason: String) -> String
    /// The command that marks the job's report stored.
    public var finish: String
    /// The job as a replica's machine holds it; nil for a machine of another format.
    /// `settings`: the node's, for what a format leaves to the node (a bike job's
    /// deadline and retries).
    public var read: @Sendable (_ machine: any ReplicatedStateMachine, _ settings: ClusterSettings) -> JobGroupState?
    /// Only which job the group holds and whether it finished: what the watcher reads
    /// of every group several times a second, without ``read``'s work (a job's every end).
    public var glance: @Sendable (_ machine: any ReplicatedStateMachine) -> JobGroups.JobState?

    public init(
        kind: String, machine: @escaping @Sendable () -> any ReplicatedStateMachine, keeps: @escaping @Sendable (_ spec: TaskJobSpec) -> Bool,
        start: @escaping @Sendable (_ spec: TaskJobSpec) throws -> String,
        batch: @escaping @Sendable (_ epoch: Int, _ events: [String], _ ends: [JobMachine.Ended]) -> [String],
        takeOver: (@Sendable (_ epoch: Int) -> String)?, cancel: @escaping @Sendable (_ reason: String) -> String, finish: String,
        read: @escaping @Sendable (_ machine: any ReplicatedStateMachine, _ settings: ClusterSettings) -> JobGroupState?,
        glance: @escaping @Sendable (_ machine: any ReplicatedStateMachine) -> JobGroups.JobState?
    ) {
        self.kind = kind
        self.machine = machine
        self.keeps = keeps
        self.start = start
        self.batch = batch
        self.takeOver = takeOver
        self.cancel = cancel
        self.finish = finish
        self.read = read
        self.glance = glance
    }

    /// The group of `job` in this format.
    public func group(of job: String) -> String { kind + "-" + job }

    /// What every format's machine answers a command it used.
    public static let applied = "ok"

    /// The kind of this release's format's groups.
    public static let jobsKind = "job"

    /// This release's format: `job-ID`, a ``JobMachine`` that knows `workloads`; any job.
    public static func jobs(workloads: JobWorkloads) -> JobGroupFormat {
        JobGroupFormat(
            kind: jobsKind, machine: { JobMachine(workloads: workloads) }, keeps: { _ in true },
            start: { JobMachine.start($0, startedAt: $0.startedAt) },
            batch: { epoch, events, ends in
                // Every chunk of events before the ends, each chunk in a command of its own
                // but the last, which goes with the first of the ends' bounded commands:
                // no command larger than a frame carries to the followers.
                var endBatches = JobEndBatches.split(ends)
                if endBatches.isEmpty, !events.isEmpty { endBatches = [[]] }
                return events.dropLast().map { JobMachine.batch(epoch: epoch, events: $0, ends: []) }
                    + endBatches.enumerated().map { index, ends in JobMachine.batch(epoch: epoch, events: index == 0 ? events.last : nil, ends: ends) }
            },
            takeOver: { JobMachine.takeOver(epoch: $0) }, cancel: { JobMachine.cancel($0) }, finish: JobMachine.finish,
            read: { machine, _ in
                guard let machine = machine as? JobMachine else { return nil }
                let ended = machine.workloadState?.endedTasks() ?? [:]
                return JobGroupState(
                    spec: machine.spec, epoch: machine.epoch, ends: machine.ends.merging(ended) { committed, _ in committed },
                    workloadState: machine.workloadState, cancelReason: machine.cancelReason, finished: machine.finished)
            },
            glance: { machine in
                (machine as? JobMachine).map { JobGroups.JobState(job: $0.spec?.id, finished: $0.finished, cancelled: $0.cancelReason != nil) }
            })
    }

    /// How releases before protocol 7 keep a job of tasks alone: `taskjob-ID`, a
    /// ``TaskJobMachine``, no epochs, no workload.
    public static let tasks = JobGroupFormat(
        kind: "taskjob", machine: { TaskJobMachine() }, keeps: { $0.workload == nil }, start: { TaskJobMachine.start($0) },
        batch: { _, _, ends in
            JobEndBatches.split(ends).map(TaskJobMachine.ended)
        },
        takeOver: nil, cancel: { TaskJobMachine.cancel($0) }, finish: TaskJobMachine.finish,
        read: { machine, _ in
            guard let machine = machine as? TaskJobMachine else { return nil }
            return JobGroupState(
                spec: machine.spec, epoch: 0, ends: machine.ends, workloadState: nil, cancelReason: machine.cancelReason,
                finished: machine.finished)
        },
        glance: { machine in
            (machine as? TaskJobMachine).map { JobGroups.JobState(job: $0.spec?.id, finished: $0.finished, cancelled: $0.cancelReason != nil) }
        })
}

/// A job as its group holds it, whatever the group's format.
public struct JobGroupState: Sendable {
    /// The job; nil before its first command applied (or for a start that was refused).
    public var spec: TaskJobSpec?
    /// The epoch whose coordinator may commit (0 for a format without epochs).
    public var epoch: Int
    /// Each task's committed end (the first committed wins).
    public var ends: [Int: TaskJobReport.TaskEnd]
    /// The workload's state as of the last committed batch; nil for a job of tasks alone.
    public var workloadState: (any JobWorkloadState)?
    public var cancelReason: String?
    public var finished: Bool

    public init(
        spec: TaskJobSpec?, epoch: Int, ends: [Int: TaskJobReport.TaskEnd], workloadState: (any JobWorkloadState)?, cancelReason: String?,
        finished: Bool
    ) {
        self.spec = spec
        self.epoch = epoch
        self.ends = ends
        self.workloadState = workloadState
        self.cancelReason = cancelReason
        self.finished = finished
    }
}

/// Task ends in commands of bounded size.
public enum JobEndBatches {
    /// At most about this many bytes of task outputs in one command: a batch of large
    /// outputs goes in several entries, each of which fits a frame on its way to the
    /// followers (review, issue 29 §1.5: one entry of many 2 MiB outputs wedged its group).
    public static let maximumBytesPerCommand = 1 << 20

    /// `ends` in order, in batches of at most about ``maximumBytesPerCommand`` (one end
    /// always goes).
    public static func split(_ ends: [JobMachine.Ended]) -> [[JobMachine.Ended]] {
        var batches: [[JobMachine.Ended]] = []
        var batch: [JobMachine.Ended] = []
        var bytes = 0
        for ended in ends {
            let end = ended.end
            let size = 64 + (end.output?.utf8.count ?? 0) + end.failures.reduce(0) { $0 + 64 + $1.reason.utf8.count }
            if !batch.isEmpty, bytes + size > maximumBytesPerCommand {
                batches.append(batch)
                batch = []
                bytes = 0
            }
            batch.append(ended)
            bytes += size
        }
        if !batch.isEmpty { batches.append(batch) }
        return batches
    }
}
