import SpokesCluster
import SpokesConcurrency

/// Where a coordinator keeps its running jobs of tasks so they outlive it: on its own
/// disk (``TaskJobJournal``: the job runs on when the node starts again) or replicated
/// on other nodes (`ReplicatedTaskJobs` in `SpokesReplication`: another node takes the
/// job over). ``TaskJobs`` tells it when a job starts, as tasks end, and when the job's
/// report is stored.
public protocol TaskJobDurability: Sendable {
    /// A new job: kept before its submitter hears it started. Throws when it cannot be.
    func jobStarted(_ spec: TaskJobSpec) async throws
    /// One batch of the job's stream, from its coordinator of `epoch` (0 until a
    /// take-over): its workload's events (chunks of JSON in order, each one value, none
    /// for a job of tasks alone), then tasks that ended. False when this node no longer
    /// owns the job (another took it over, in a later epoch): it stops running it and
    /// stores nothing.
    func streamed(epoch: Int, events: [String], ends: [(task: Int, end: TaskJobReport.TaskEnd)], of job: String) async -> Bool
    /// The job is being cancelled (`reason`): kept before its run stops, so whoever takes
    /// it over runs none of its tasks. False when it could not be kept here (this node no
    /// longer owns the job): the run then stops and stores nothing.
    func jobCancelled(_ job: String, reason: String) async -> Bool
    /// The job's report is stored: it need not be kept any more.
    func jobFinished(_ job: String) async
    /// The unfinished jobs kept here that no node may be running now (their coordinator
    /// died and the take-over has not begun): listed as running, so a client waiting for
    /// one (`spokes result --wait`) waits.
    func heldUnfinished() async -> [TaskJobJournal.Unfinished]
    /// Whether this node holds `job`'s replicated state, even where it cannot list the job
    /// yet (a replica restarted and not yet caught up): it runs on somewhere.
    func holdsReplica(of job: String) async -> Bool
    /// The ends of `job`'s tasks as kept here, which the report must show (where two
    /// nodes ran a task, the end kept first); nil when this node's own ends are the record.
    func keptEnds(of job: String) async -> [Int: TaskJobReport.TaskEnd]?
}

extension TaskJobJournal: TaskJobDurability {
    /// A workload's job is refused: the journal keeps task ends, not a workload's state,
    /// so a restart would run it on from a state that forgot its events (such a job is
    /// kept in a group, of one node where there are no peers).
    public func jobStarted(_ spec: TaskJobSpec) async throws {
        if let workload = spec.workload { throw WorkloadNotJournaled(job: spec.id, workload: workload.name) }
        try await runBlocking("spokes.job-journal") { try self.begin(spec) }
    }

    /// Why a node's journal did not take a workload's job.
    public struct WorkloadNotJournaled: Error, Sendable, CustomStringConvertible {
        public var job: String
        public var workload: String
        public var description: String {
            "job \(job) of workload \(workload) cannot be kept in a journal, only in a group of replicas"
        }
    }


    /// A failed write drops nothing from the job (its ends are in memory): a restart then
    /// runs those tasks again. The job stays this node's. Events are refused (false): the
    /// journal keeps no workload's jobs (it refuses them at their start).
    public func streamed(epoch: Int, events: [String], ends: [(task: Int, end: TaskJobReport.TaskEnd)], of job: String) async -> Bool {
        guard events.isEmpty else { return false }
        _ = try? await runBlocking("spokes.job-journal") { try self.record(ends, of: job) }
        return true
    }

    /// Nothing: the journal's job is this node's alone, and its cancelled report is stored
    /// before the journal forgets it (a crash between the two runs the rest again).
    public func jobCancelled(_ job: String, reason: String) async -> Bool { true }

    public func jobFinished(_ job: String) async {
        await runBlocking("spokes.job-journal") { self.finish(job) }
    }

    /// None: a node runs its journal's jobs as soon as it starts.
    public func heldUnfinished() async -> [TaskJobJournal.Unfinished] { [] }

    /// False: a journaled job is only this node's, and listed while it runs.
    public func holdsReplica(of job: String) async -> Bool { false }

    /// Nil: only this node runs a journaled job, so its own ends are the record.
    public func keptEnds(of job: String) async -> [Int: TaskJobReport.TaskEnd]? { nil }
}
