import FoundationEssentials
import SpokesCluster
import SpokesReplication

/// A job of tasks as a Raft group's state (`taskjob-ID` groups): its spec, each task's
/// end once (the first committed wins), and whether its report was stored. Every replica
/// applies the same commands in the same order, so whichever replica leads next knows
/// exactly which tasks still have to run.
///
/// Commands are JSON: `{"spec": ...}` (once; a repeat is ignored), `{"ends": [{"task": N,
/// "end": ...}]}`, `{"cancelled": REASON}` (the first reason stays), `{"finished": true}`. A command it cannot use (bad JSON, a task out of
/// range, ends before the spec) changes nothing and returns an `error:` result, the same
/// on every replica.
public struct TaskJobMachine: ReplicatedStateMachine, Equatable {
    /// One task's end in an `ends` command: the same as a ``JobMachine`` batch's.
    public typealias Ended = JobMachine.Ended

    private struct Command: Codable {
        var spec: TaskJobSpec?
        var ends: [Ended]?
        var cancelled: String?
        var finished: Bool?
    }

    private struct State: Codable, Equatable {
        var spec: TaskJobSpec?
        var ends: [Int: TaskJobReport.TaskEnd] = [:]
        var cancelReason: String?
        var finished = false
    }

    private var state = State()

    public init() {}

    public var spec: TaskJobSpec? { state.spec }
    public var ends: [Int: TaskJobReport.TaskEnd] { state.ends }
    public var finished: Bool { state.finished }
    /// Why the job was cancelled, once a cancellation is committed: a leader that takes
    /// it over runs none of its tasks.
    public var cancelReason: String? { state.cancelReason }

    /// The command that records `spec`.
    public static func start(_ spec: TaskJobSpec) -> String { encode(Command(spec: spec)) }
    /// The command that records task ends.
    public static func ended(_ ends: [Ended]) -> String { encode(Command(ends: ends)) }
    /// The command that records a cancellation.
    public static func cancel(_ reason: String) -> String { encode(Command(cancelled: reason)) }
    /// The command that marks the job's report stored.
    public static let finish = encode(Command(finished: true))

    private static func encode(_ command: Command) -> String {
        MachineText.encode(command)
    }

    public mutating func apply(_ command: String) -> String {
        guard let decoded = try? MachineText.decode(Command.self, from: command) else { return "error: not a job command" }
        if let spec = decoded.spec {
            guard (try? spec.checkRanges()) != nil else { return "error: a spec out of range" }
            if state.spec == nil { state.spec = spec }
        }
        if let ends = decoded.ends {
            guard let spec = state.spec else { return "error: task ends before the job's spec" }
            guard ends.allSatisfy({ spec.inputs.indices.contains($0.task) }) else { return "error: a task out of range" }
            for ended in ends where state.ends[ended.task] == nil { state.ends[ended.task] = ended.end }
        }
        if let reason = decoded.cancelled, state.cancelReason == nil { state.cancelReason = String(reason.prefix(200)) }
        if decoded.finished == true { state.finished = true }
        return "ok"
    }

    public func snapshot() -> String {
        MachineText.encode(state)
    }

    public mutating func restore(_ snapshot: String) throws {
        state = try MachineText.decode(State.self, from: snapshot)
    }
}
