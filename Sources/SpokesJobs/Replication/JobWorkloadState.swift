import SpokesReplication

/// A workload's shared state that a job's group carries beside its tasks (the bike job's
/// stations and users): a pure reducer of the events the workload's run makes on the
/// coordinator, applied on every replica in the order they were made (Docs/one-job-layer.md).
///
/// Like every ``ReplicatedStateMachine``, it is deterministic: no clock, no randomness,
/// no I/O; events it cannot use are refused (counted, the same on every replica), never a
/// crash.
public protocol JobWorkloadState: Sendable {
    /// Applies one batch of events (the workload's JSON text, as its run wrote it), all
    /// or nothing: nil when every event applied, else why the batch changed nothing.
    mutating func apply(events: Substring) -> String?
    /// The whole state as text, which ``JobWorkloadStates/Workload/restore`` reads back.
    func snapshot() -> String
}

/// The workloads whose state a node's job groups may carry, by name (`bikes`): how each
/// state starts from a job's parameters and is read back from a snapshot. A node
/// registers its workloads once, before it opens or restores any job group; a group whose
/// workload this node does not know is refused at its first command, the same on every
/// replica of this release.
public struct JobWorkloadStates: Sendable {
    /// One workload's two ways to make its state.
    public struct Workload: Sendable {
        /// The state a job starts from, made from its spec's parameters (the workload's
        /// JSON); throws when they are out of range.
        public var start: @Sendable (_ parameters: String) throws -> any JobWorkloadState
        /// A state read back from its ``JobWorkloadState/snapshot()``.
        public var restore: @Sendable (_ snapshot: String) throws -> any JobWorkloadState

        public init(
            start: @escaping @Sendable (_ parameters: String) throws -> any JobWorkloadState,
            restore: @escaping @Sendable (_ snapshot: String) throws -> any JobWorkloadState
        ) {
            self.start = start
            self.restore = restore
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
}
