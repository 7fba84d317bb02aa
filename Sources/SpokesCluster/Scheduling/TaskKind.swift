import SpokesConcurrency
import Synchronization

/// A kind of task a node can run: a name, `Codable` input and output types (they travel
/// as JSON), what a task of the kind costs while it runs, a schema version, and the
/// async function that turns an input into an output.
///
/// ```swift
/// struct Square: TaskKind {
///     static let name = "math.square"
///     func run(_ input: Int, context: TaskContext) async throws -> Int { input * input }
/// }
/// let registry = TaskRegistry(kinds: [Square()])
/// ```
///
/// A node runs the kinds it was built with: an executable registers its own and starts
/// the whole command-line tool with `SpokesTool.main(kinds: [Square()])` (README, "Your
/// own tasks"; `Examples/MonteCarloPi`).
///
/// **Errors.** Whatever `run` throws comes back to the submitter as the error's type and
/// message, e.g. `PiSampleError.tooManySamples: samples must be from 1 to 1000000000, got 0`
/// (give your error a `description` for the message; see ``TaskError/kindFailed(kind:type:message:)``).
/// A failed attempt is retried on another node, up to the job's retries.
///
/// **Cancellation.** When the job is cancelled or the attempt passes its deadline, the
/// task running `run` is cancelled: `Task.sleep` and other cancellable waits throw
/// `CancellationError`, and long computations should check `Task.isCancelled` (or call
/// `try Task.checkCancellation()`) now and then and stop.
///
/// **Limits.** The input and output JSON each ride inside a frame, so each may be at most
/// ``TaskLimits/maximumDataBytes(frameBytes:)`` bytes (2 MiB with the default
/// `limits.max_frame_bytes` of 8 MiB), and the input is refused when it nests deeper or
/// holds longer arrays than `limits.max_json_depth` and `limits.max_array_length`. Check
/// your own input's values in `run` and throw an error that says what is wrong.
public protocol TaskKind: Sendable {
    associatedtype Input: Codable & Sendable
    associatedtype Output: Codable & Sendable

    /// The name tasks are submitted under, e.g. `bikes.user`: unique in a cluster, and the
    /// same on every node that runs the kind. By convention `area.verb-or-noun`.
    static var name: String { get }

    /// The version of the input and output schema; default `"1"`. **Change it when the
    /// input or output changes** (a field added, removed, renamed or retyped): it goes into
    /// the kind's ``TaskSchema``, so nodes built from different versions are never mixed.
    static var version: String { get }

    /// What a task of this kind costs while it runs; default ``TaskCost/cpu``.
    static var cost: TaskCost { get }

    /// What the task for `input` costs, for kinds whose cost depends on the input (such
    /// as `bikes.user`, which waits when its moves sleep); default ``cost``.
    func cost(of input: Input) -> TaskCost

    /// Refuses an input the kind cannot run, throwing an error that says what is wrong
    /// (e.g. a count out of its range); default: accepts every input that decodes. It runs
    /// on the worker before ``run(_:context:)``, and on a submitter that runs the kind
    /// itself before the input is sent, so a bad input is named before any task runs.
    func validate(_ input: Input) throws

    /// Runs one task. Throw to fail the attempt (it is retried elsewhere); see the type's
    /// notes on errors and cancellation.
    func run(_ input: Input, context: TaskContext) async throws -> Output
}

extension TaskKind {
    public static var version: String { "1" }
    public static var cost: TaskCost { .cpu }
    public func cost(of input: Input) -> TaskCost { Self.cost }
    public func validate(_ input: Input) throws {}

    /// The kind's name, version and fingerprint, as members advertise it. The types'
    /// names are `String(reflecting:)`'s (the fully qualified name), read straight from the
    /// runtime: `String(reflecting:)` first looks for a description among every
    /// conformance of the metatype, a quarter of a million instructions a call.
    public static var schema: TaskSchema {
        TaskSchema(name: name, version: version, input: _typeName(Input.self, qualified: true), output: _typeName(Output.self, qualified: true))
    }
}

/// What a task holds on its node while it runs (issue 17 §1).
///
/// A node has two budgets: its cpu slots (`node.slots`, by default one per core it may
/// run on) and a much larger budget of waiting slots (`node.waiting_slots`, thousands,
/// bounded by memory). A ``TaskRequest`` carries its cost, so the worker counts it against
/// that budget (``WorkerAdmission``); a coordinator asks ``Systems`` for a place of that
/// cost: cpu tasks go to the first node with a cpu slot free (its own first), waiting
/// tasks to the least loaded node (``Placement``).
public enum TaskCost: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// It computes: it holds one of the node's cpu slots, so a node runs about as many at
    /// once as it has cores. Simulations at time scale 0, numeric work, parsing.
    case cpu
    /// It mostly awaits sleeps, I/O or remote calls: it holds one place of the node's
    /// much larger waiting budget, so thousands can run at once on one node. A real-time
    /// bike user (its moves sleep), a task that calls a web service.
    case waiting

    public var description: String { rawValue }
}

/// A kind as members advertise it: its name, its schema version and a fingerprint of
/// both with the input and output type names. Two nodes run the same kind only when
/// their fingerprints are equal.
public struct TaskSchema: Sendable, Hashable, Codable, CustomStringConvertible {
    public var name: String
    public var version: String
    /// 16 hex digits: the start of the SHA-256 of the name, the version and the fully
    /// qualified input and output type names (`Module.Type`). It changes with the version
    /// or a renamed type, not with a field added to a type: that is what the version is for.
    public var fingerprint: String

    public init(name: String, version: String, fingerprint: String) {
        self.name = name
        self.version = version
        self.fingerprint = fingerprint
    }

    /// The schema of a kind with these input and output type names.
    public init(name: String, version: String, input: String, output: String) {
        let digest = SHA256.hash(Array([name, version, input, output].joined(separator: "\n").utf8))
        self.init(name: name, version: version, fingerprint: digest.prefix(8).hex)
    }

    /// `pi.sample v1 (8c1f0a2b3d4e5f60)`.
    public var description: String { "\(name) v\(version) (\(fingerprint))" }
}

/// What a running task knows about where and why it runs.
public struct TaskContext: Sendable {
    /// The node running the task.
    public let system: ClusterSystem
    /// The job the task belongs to.
    public let job: String
    /// The task's number in its job.
    public let task: Int
    /// 1 for the first try, then 2, 3, ... for retries.
    public let attempt: Int
    /// Since when the task has been ready to run, on this node's runtime clock: before it
    /// arrived by what its coordinator counted (``TaskRequest/readyAgo``; on the
    /// coordinator's own worker ``TaskRequest/readySinceHere``, the same clock's reading),
    /// or when it arrived, or when it got its slot after waiting in this worker's queue. A real-time
    /// task counts its schedule from here (a bike user's moves), so it keeps to the
    /// schedule it would have kept had every task of its job started at once.
    public let readySince: Double

    /// `readySince` nil: ready now.
    public init(system: ClusterSystem, job: String, task: Int, attempt: Int, readySince: Double? = nil) {
        self.system = system
        self.job = job
        self.task = task
        self.attempt = attempt
        self.readySince = readySince ?? system.runtime.now
    }

    /// Runs CPU-bound `work` on a thread of its own and returns what it returns. Use it
    /// for any computation longer than a millisecond or so: `run` itself runs on Swift's
    /// cooperative pool, which has about one thread per core, and a loop that holds a
    /// pool thread for seconds delays the node's heartbeats until its peers take it for
    /// dead. `work` gets `isCancelled`, true once the task is cancelled (its job was
    /// cancelled or its deadline passed): check it now and then and throw
    /// `CancellationError()` when it is.
    ///
    /// ```swift
    /// func run(_ input: Input, context: TaskContext) async throws -> Output {
    ///     try await context.compute { isCancelled in try Self.count(input, isCancelled: isCancelled) }
    /// }
    /// ```
    public func compute<T: Sendable>(_ work: @escaping @Sendable (_ isCancelled: @escaping @Sendable () -> Bool) throws -> T) async throws -> T {
        let cancelled = Atomic<Bool>(false)
        return try await withTaskCancellationHandler {
            try await runBlocking("spokes.task.compute") { try work { cancelled.load(ordering: .relaxed) } }
        } onCancel: {
            cancelled.store(true, ordering: .relaxed)
        }
    }
}
