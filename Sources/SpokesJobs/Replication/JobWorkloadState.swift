import SpokesReplication

/// A workload's shared state that a job's group carries beside its tasks (the bike job's
/// stations and users): a pure reducer of the events the workload's run makes on the
/// coordinator, applied on every replica in the order they were made (Docs/one-job-layer.md).
///
/// Like every ``ReplicatedStateMachine``, it is deterministic: no clock, no randomness,
/// no I/O; events it cannot use are refused (the same on every replica), never a crash.
public protocol JobWorkloadState: Sendable {
    /// Applies one batch of events (the bytes of the workload's JSON value, as its run
    /// wrote it, read in place from the committed command), all or nothing: nil when every
    /// event applied, else why the batch changed nothing.
    mutating func apply(events: ArraySlice<UInt8>) -> String?
    /// The whole state as text, which ``JobWorkloads/Workload/restore`` reads back.
    func snapshot() -> String
    /// The tasks this state says have ended, each as its end: a run that takes the job
    /// over runs none of them, even where the end itself was not committed yet (the bike
    /// job's book counts a user's result in one event and records its end in a later
    /// one; a take-over between the two must not run the user again). The ends the
    /// group committed win over these.
    func endedTasks() -> [Int: TaskJobReport.TaskEnd]
}

extension JobWorkloadState {
    /// None: the state knows no task's end beyond those committed.
    public func endedTasks() -> [Int: TaskJobReport.TaskEnd] { [:] }
}
