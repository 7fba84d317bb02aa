import SpokesConcurrency

/// Where a coordinator keeps its running jobs of tasks so they outlive it: on its own
/// disk (``TaskJobJournal``: the job runs on when the node starts again) or replicated
/// on other nodes (`ReplicatedTaskJobs` in `SpokesReplication`: another node takes the
/// job over). ``TaskJobs`` tells it when a job starts, as tasks end, and when the job's
/// report is stored.
public protocol TaskJobDurability: Sendable {
    /// A new job: kept before its submitter hears it started. Throws when it cannot be.
    func jobStarted(_ spec: TaskJobSpec) async throws
    /// Tasks that ended. False when this node no longer owns the job (another took it
    /// over): it stops running it and stores nothing.
    func tasksEnded(_ ends: [(task: Int, end: TaskJobReport.TaskEnd)], of job: String) async -> Bool
    /// The job's report is stored: it need not be kept any more.
    func jobFinished(_ job: String) async
}

extension TaskJobJournal: TaskJobDurability {
    public func jobStarted(_ spec: TaskJobSpec) async throws {
        try await runBlocking("spokes.job-journal") { try self.begin(spec) }
    }

    /// A failed write drops nothing from the job (its ends are in memory): a restart then
    /// runs those tasks again. The job stays this node's.
    public func tasksEnded(_ ends: [(task: Int, end: TaskJobReport.TaskEnd)], of job: String) async -> Bool {
        _ = try? await runBlocking("spokes.job-journal") { try self.record(ends, of: job) }
        return true
    }

    public func jobFinished(_ job: String) async {
        await runBlocking("spokes.job-journal") { self.finish(job) }
    }
}
