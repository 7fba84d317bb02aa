import SpokesCluster

/// The workloads whose jobs a node runs beside plain jobs of tasks, by name (`bikes`):
/// how each one's shared state starts and is read back (for the job's group,
/// ``JobMachine``), and how its coordinator runs a job (``JobWorkloadRun``, for
/// ``TaskJobs``). A node registers its workloads once, before it opens or restores any
/// job group; a job of a workload this node does not know is refused, the same on every
/// replica of this release.
public struct JobWorkloads: Sendable {
    /// One workload.
    public struct Workload: Sendable {
        /// The state a job starts from, made from its spec's parameters (the workload's
        /// JSON); throws when they are out of range.
        public var start: @Sendable (_ parameters: String) throws -> any JobWorkloadState
        /// A state read back from its ``JobWorkloadState/snapshot()``.
        public var restore: @Sendable (_ snapshot: String) throws -> any JobWorkloadState
        /// One run of a job on its coordinator, from the job's state now (its start, or
        /// what its group committed when this node takes it over).
        public var run: @Sendable (_ context: JobWorkloadContext) throws -> any JobWorkloadRun
        /// The group format an earlier release kept this workload's jobs in (the bike job's
        /// `bikejob-ID`), if any: used while a member does not speak protocol 7, and to
        /// take over and finish the groups such a release made (``JobGroupFormat``).
        public var olderFormat: JobGroupFormat?

        public init(
            start: @escaping @Sendable (_ parameters: String) throws -> any JobWorkloadState,
            restore: @escaping @Sendable (_ snapshot: String) throws -> any JobWorkloadState,
            run: @escaping @Sendable (_ context: JobWorkloadContext) throws -> any JobWorkloadRun,
            olderFormat: JobGroupFormat? = nil
        ) {
            self.start = start
            self.restore = restore
            self.run = run
            self.olderFormat = olderFormat
        }
    }

    private var workloads: [String: Workload] = [:]

    public init() {}

    /// Adds `workload` under `name`, replacing any before it.
    public mutating func register(_ name: String, _ workload: Workload) {
        workloads[name] = workload
    }

    /// The workload named `name`, if registered.
    public subscript(name: String) -> Workload? { workloads[name] }

    /// The group formats of earlier releases the workloads bring, by name.
    public var olderFormats: [JobGroupFormat] {
        workloads.sorted { $0.key < $1.key }.compactMap(\.value.olderFormat)
    }
}

/// What a workload's run is made from.
public struct JobWorkloadContext: Sendable {
    public var spec: TaskJobSpec
    /// The job's state as this run starts from it.
    public var state: any JobWorkloadState
    /// The coordinator's epoch: 0 for the job's first, one more for each take-over. What
    /// the run hosts for its workers (the bike job's stations) is named by it, so workers
    /// of a replaced coordinator cannot reach this one's.
    public var epoch: Int
    /// The coordinator's node.
    public var node: ClusterNode
    /// Who cancelled the job, as a sentence (`cancelled by the submitter`), read when an
    /// attempt is cancelled; `cancelled` until someone did.
    public var cancelReason: @Sendable () -> String
}

/// One run of a workload's job on its coordinator (``TaskJobs`` drives it): the inputs of
/// its tasks' attempts, which outputs count, and the changes its state makes, which the
/// desk commits to the job's group as one stream with the task ends (Docs/one-job-layer.md).
///
/// The contract that makes a replicated job's state right on every replica: every change
/// is an event, made in one order and handed out by ``takeEvents()`` in that order, and
/// an event is made before any task end that depends on it is reported (``ended(task:outcome:)``
/// comes after the ``accept(task:attempt:output:)`` of the same attempt).
public protocol JobWorkloadRun: Sendable {
    /// What each of the job's tasks costs a worker; nil: the kind's cost of the job's first
    /// input.
    var cost: TaskCost? { get }
    /// The input of `task`'s `attempt` in this run (1 for its first here): where it resumes,
    /// and the number it is fenced by.
    func input(task: Int, attempt: Int) throws -> String
    /// Whether `output` of `task`'s `attempt` counts (false: a newer attempt fenced it off).
    func accept(task: Int, attempt: Int, output: String) -> Bool
    /// What of `task`'s accepted `output` the job keeps in its group and report: all of it,
    /// or less where the workload's state already holds what counts (the bike job's book
    /// holds each user's end, so its outputs are not kept twice).
    func keptOutput(task: Int, output: String) -> String
    /// `task` ended in this run (cancelled ones too, and those cancelled before they started).
    func ended(task: Int, outcome: JobRunner.Outcome)
    /// The oldest events not taken yet, in order, as one JSON value for the state's
    /// ``JobWorkloadState/apply(events:)``; nil when there are none. A run hands out a
    /// bounded chunk at a time (the desk takes until nil, and commits each chunk in a
    /// command of its own): one command must fit a frame on its way to the followers.
    func takeEvents() -> String?
    /// Rings (at most once until the events are taken) when events are made.
    var newEvents: AsyncStream<Void> { get }
    /// The job ended: the state changes no more (a cancelled attempt on a worker may
    /// still try).
    func close()
    /// The workload's own report of the job (its JSON), from its state now and every
    /// task's end; stored with the job's report.
    func report(ends: [Int: TaskJobReport.TaskEnd], cancelReason: String?) -> String?
}
