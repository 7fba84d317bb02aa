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
}
