import FoundationEssentials
import SpokesCluster
import SpokesReplication

/// A job as its Raft group's state, whatever it runs (Docs/one-job-layer.md): its spec,
/// the epoch whose coordinator may change it, each task's end once (the first committed
/// wins), the state of the workload it carries beside its tasks (``JobWorkloadState``:
/// the bike job's stations and users), its cancellation and whether its report was
/// stored. Every replica applies the same commands in the same order, so whichever
/// replica leads next knows exactly which tasks still have to run and from which
/// workload state.
///
/// Commands are JSON objects; a command may hold several of these members, applied in
/// this order:
/// - `"spec": {...}` (a ``TaskJobSpec``) with `"startedAt": SECONDS`: the job, once (a
///   repeat is ignored); its workload's state starts from the spec's parameters.
/// - `"takeOver": EPOCH`: a leader that takes the job over commits the next epoch first
///   (one above the job's: a take-over proposed from a stale state, or twice, is refused).
/// - `"epoch": EPOCH` with `"events": VALUE` and/or `"ends": [{"task": N, "end": ...}]`:
///   one batch of the coordinator's stream, the workload's events (its own JSON, handed
///   to it as written) and then the task ends. **All or nothing, and only from the
///   current epoch**: a batch of an older coordinator, or one whose events the workload
///   refuses, changes nothing and answers `error:` (its run stops; a leader takes the job
///   over from this state). Events before ends is the stream's order: a batch holds
///   what its run made since the last, and a task's end never precedes the events its
///   task made, so no replica holds an end without them.
/// - `"cancelled": REASON` (the first reason stays), `"finished": true`.
///
/// A command it cannot use (not a JSON object, a spec out of range or of a workload not
/// known here, a task out of range, a batch before the spec) changes nothing and returns
/// an `error:` result, the same on every replica.
public struct JobMachine: ReplicatedStateMachine {
    /// One task's end in a batch.
    public struct Ended: Codable, Equatable, Sendable {
        public var task: Int
        public var end: TaskJobReport.TaskEnd

        public init(task: Int, end: TaskJobReport.TaskEnd) {
            self.task = task
            self.end = end
        }
    }

    /// Everything but the workload's state, which keeps its own text.
    private struct State: Codable, Equatable {
        var spec: TaskJobSpec?
        var startedAt: Double?
        var epoch = 0
        var ends: [Int: TaskJobReport.TaskEnd] = [:]
        var cancelReason: String?
        var finished = false
        var refusedBatches = 0
        /// The workload's ``JobWorkloadState/snapshot()``, in a snapshot only.
        var workload: String?
    }

    private var state = State()
    private var workload: (any JobWorkloadState)?
    private let workloads: JobWorkloads

    /// A machine whose jobs may carry the states of `workloads`.
    public init(workloads: JobWorkloads = JobWorkloads()) {
        self.workloads = workloads
    }

    public var spec: TaskJobSpec? { state.spec }
    /// When the job's first coordinator started it (seconds since 1970).
    public var startedAt: Double? { state.startedAt }
    /// The epoch whose coordinator may commit batches (0 until a take-over).
    public var epoch: Int { state.epoch }
    public var ends: [Int: TaskJobReport.TaskEnd] { state.ends }
    /// Why the job was cancelled, once a cancellation is committed: a leader that takes
    /// it over runs none of its tasks.
    public var cancelReason: String? { state.cancelReason }
    public var finished: Bool { state.finished }
    /// Batches refused for their events (zero for a coordinator that keeps the contract).
    public var refusedBatches: Int { state.refusedBatches }
    /// The workload's state as of the last committed batch; nil for a job of tasks alone.
    public var workloadState: (any JobWorkloadState)? { workload }

    /// What applying a command that was used answers.
    public static let applied = "ok"

    /// The command that records `spec`, started at `startedAt` (seconds since 1970).
    public static func start(_ spec: TaskJobSpec, startedAt: Double? = nil) -> String {
        MachineText.encode(Start(spec: spec, startedAt: startedAt))
    }

    /// The command a leader commits before it runs the job from this state, in `epoch`.
    public static func takeOver(epoch: Int) -> String { "{\"takeOver\":\(epoch)}" }

    /// The command that records one batch of the coordinator of `epoch`: `events` (the
    /// workload's JSON value, nil when none) and then `ends` (written by hand:
    /// ``JobEndsCodec``, the JSON `Codable` writes of them).
    public static func batch(epoch: Int, events: String?, ends: [Ended]) -> String {
        var out = Array(#"{"epoch":"#.utf8)
        HandJSON.integer(epoch, to: &out)
        if let events {
            out += #","events":"#.utf8
            out += events.utf8
        }
        if !ends.isEmpty {
            out += #","ends":"#.utf8
            JobEndsCodec.write(ends, to: &out)
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }

    /// The command that records a cancellation.
    public static func cancel(_ reason: String) -> String { MachineText.encode(["cancelled": reason]) }

    /// The command that marks the job's report stored.
    public static let finish = "{\"finished\":true}"

    private struct Start: Codable {
        var spec: TaskJobSpec
        var startedAt: Double?
    }

    public mutating func apply(_ command: String) -> String {
        let bytes = Array(command.utf8)
        guard let members = JobStore.members(ofObject: bytes[...]) else { return "error: not a job command" }
        var values: [String: ArraySlice<UInt8>] = [:]
        for member in members where values[member.key] == nil { values[member.key] = member.value }
        /// The member `key` read as a `T`; nil when absent; throws when not a `T`.
        func member<T: Decodable>(_ key: String, as type: T.Type) throws -> T? {
            try values[key].map { try JSONDecoder().decode(T.self, from: Data($0)) }
        }
        /// The integer member `key`, by hand when written as ``HandJSON`` writes one (every
        /// batch's epoch), else as ``member(_:as:)`` reads it.
        func integer(_ key: String) throws -> Int? {
            guard let bytes = values[key] else { return nil }
            var reader = HandJSON.Reader(bytes: bytes)
            if let value = reader.integer(), reader.atEnd { return value }
            return try member(key, as: Int.self)
        }
        let spec: TaskJobSpec?, startedAt: Double?, takeOver: Int?, epoch: Int?
        let ends: [Ended]?, cancelled: String?, finished: Bool?
        do {
            spec = try member("spec", as: TaskJobSpec.self)
            startedAt = try member("startedAt", as: Double.self)
            takeOver = try integer("takeOver")
            epoch = try integer("epoch")
            // A batch's ends by hand when in the form `batch` writes, else as before.
            ends = try values["ends"].map(JobEndsCodec.decode)
            cancelled = try member("cancelled", as: String.self)
            finished = try member("finished", as: Bool.self)
        } catch {
            return "error: a member of the command is not of its type"
        }

        if let spec, state.spec == nil {
            guard (try? spec.checkRanges()) != nil else { return "error: a spec out of range" }
            if let parameters = spec.workload {
                guard let kind = workloads[parameters.name] else { return "error: workload \(parameters.name) is not known here" }
                guard let started = try? kind.start(parameters.parameters) else { return "error: workload parameters out of range" }
                workload = started
            }
            state.spec = spec
            state.startedAt = startedAt.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
        }
        if let takeOver {
            guard state.spec != nil else { return "error: a take-over before the job" }
            guard takeOver > state.epoch else { return "error: epoch \(takeOver) is not above epoch \(state.epoch)" }
            state.epoch = takeOver
        }
        let events = values["events"]
        if events != nil || ends != nil {
            if let refusal = applyBatch(epoch: epoch ?? 0, events: events, ends: ends ?? []) { return refusal }
        }
        if let cancelled, state.cancelReason == nil { state.cancelReason = String(cancelled.prefix(200)) }
        if finished == true { state.finished = true }
        return Self.applied
    }

    /// One batch of the stream, all or nothing; nil when applied, else why not.
    private mutating func applyBatch(epoch: Int, events: ArraySlice<UInt8>?, ends: [Ended]) -> String? {
        guard let spec = state.spec else { return "error: a batch before the job" }
        guard !state.finished else { return "error: the job has finished" }
        guard epoch == state.epoch else { return "error: a batch of epoch \(epoch), the job is in epoch \(state.epoch)" }
        guard ends.allSatisfy({ spec.inputs.indices.contains($0.task) }) else { return "error: a task out of range" }
        if let events {
            guard var changed = workload else { return "error: events for a job that carries no workload" }
            if let refusal = changed.apply(events: events) {
                state.refusedBatches += 1
                return "error: the workload refused the batch (\(refusal)); it changed nothing"
            }
            workload = changed
        }
        for ended in ends where state.ends[ended.task] == nil { state.ends[ended.task] = ended.end }
        return nil
    }

    /// The whole state as JSON with its keys sorted, so replicas in the same state write
    /// the same text (a check can compare them byte for byte).
    public func snapshot() -> String {
        var whole = state
        whole.workload = workload?.snapshot()
        return MachineText.canonical(whole)
    }

    public mutating func restore(_ snapshot: String) throws {
        var restored = try MachineText.decode(State.self, from: snapshot)
        var restoredWorkload: (any JobWorkloadState)?
        if let parameters = restored.spec?.workload {
            guard let kind = workloads[parameters.name], let text = restored.workload else { throw UnknownWorkload(name: parameters.name) }
            restoredWorkload = try kind.restore(text)
        }
        restored.workload = nil
        state = restored
        workload = restoredWorkload
    }

    /// A snapshot of a job whose workload this node does not know (or without its state).
    public struct UnknownWorkload: Error, Sendable, CustomStringConvertible {
        public var name: String
        public var description: String { "a job group's snapshot carries workload \(name), whose state this node cannot read" }
    }
}
