import FoundationEssentials
import SpokesCluster
import SpokesConcurrency
import Synchronization

/// A program's connection to a cluster, from Swift code: what `spokes map` does on the
/// command line. The client is not a member; it submits a job of tasks to the node it
/// joined (``TaskJobs``), which places each task on a member that runs its kind
/// (``KindPlacement``) with a free place, retries a failed task on another member, and
/// stores the job.
///
/// ```swift
/// var settings = ClusterSettings()              // cluster, secret, ... as the CLI reads them
/// settings.secret = ProcessInfo.processInfo.environment["SPOKES_SECRET"]
/// let client = try await ClusterClient.connect(settings: settings)     // discovery, or to: address
/// defer { client.shutdown() }
/// let outputs = try await client.map(PiSample.self, over: inputs, deadline: 60, retries: 2) { progress in
///     print("\(progress.done)/\(progress.total)")
/// }
/// for try await result in client.mapUnordered(PiSample.self, over: inputs) { ... }
/// ```
///
/// Cancelling the calling task cancels the job: the tasks that run and the ones not
/// started. The job belongs to the node: if the client goes away it runs on and is
/// stored (`spokes jobs`, `spokes result`, `spokes cancel` find it).
public final class ClusterClient: Sendable {
    /// The client's own actor system (not a member).
    public let system: ClusterSystem
    /// The node the client joined first, which it asks for the members.
    public let entry: NodeID
    /// The kinds this program runs itself: inputs are checked against them before they
    /// are sent, and their versions decide where tasks go.
    public let registry: TaskRegistry
    /// Seconds a call other than a task's may take (the settings' call timeout); a task's
    /// attempt has its deadline instead.
    public let callTimeout: Double

    /// A client over `system`, already joined to `entry` (``connect(to:settings:registry:timeout:runtime:)``
    /// does both). `system`'s call timeout must outlast an attempt: twice the longest deadline.
    public init(system: ClusterSystem, entry: NodeID, registry: TaskRegistry, callTimeout: Double) {
        self.system = system
        self.entry = entry
        self.registry = registry
        self.callTimeout = callTimeout
    }

    /// Connects to the node at `address`, or (nil) to the first node of
    /// `settings.cluster` heard by discovery within `timeout` seconds. `settings` carry
    /// the cluster, the secret and the call timeout; `registry` the kinds this program
    /// runs (for checking inputs and choosing versions). The client finds, dials and
    /// waits through `runtime` (a test's simulated network and virtual clock).
    public static func connect(
        to address: SocketAddress? = nil, settings: ClusterSettings = ClusterSettings(), registry: TaskRegistry = TaskRegistry(),
        timeout: Double = 3, runtime: Runtime = .real
    ) async throws -> ClusterClient {
        let target: SocketAddress
        if let address {
            target = address
        } else {
            target = try await NodeFinder.firstNode(settings: settings, timeout: timeout, runtime: runtime)
        }
        var clientSettings = settings
        clientSettings.host = "127.0.0.1"
        clientSettings.port = 0
        clientSettings.joinsAnyCluster = clientSettings.joinsAnyCluster || address != nil
        // Attempts are bounded by their deadline (a queued one by twice that), not by the
        // call timeout, which bounds every other call here.
        clientSettings.callTimeout = 2 * JobRunner.deadlineRange.upperBound + 30
        clientSettings.handshakeTimeout = min(settings.handshakeTimeout, settings.callTimeout)
        let system = try ClusterSystem(settings: clientSettings, isMember: false, runtime: runtime)
        do {
            let peer = try await withTimeout(seconds: settings.callTimeout, clock: system.runtime.clock) { try await system.join(target) }
            return ClusterClient(system: system, entry: peer.node, registry: registry, callTimeout: settings.callTimeout)
        } catch {
            system.shutdown()
            throw error
        }
    }

    /// Closes the client's connections.
    public func shutdown() {
        system.shutdown()
    }

    /// How far a map has come, after each task ends.
    public struct Progress: Sendable, Hashable {
        public var total: Int
        /// Tasks that succeeded.
        public var done: Int
        /// Tasks whose every attempt failed.
        public var failed: Int
        /// Attempts started again after a failed one.
        public var retries: Int
        /// Tasks that succeeded, per node.
        public var perNode: [String: Int]
    }

    /// A task whose every attempt failed: its input's index and each attempt's node and
    /// reason.
    public struct TaskFailure: Error, Sendable, Hashable, CustomStringConvertible {
        public var index: Int
        public var failures: [JobRunner.Failure]

        public var description: String {
            "task \(index) failed: " + failures.map { "attempt \($0.attempt)\($0.node.isEmpty ? "" : " on \($0.node)"): \($0.reason)" }
                .joined(separator: "; ")
        }
    }

    /// Some tasks of a map failed: the outputs of those that succeeded (nil for the
    /// others), and the failures.
    public struct MapFailure<Output: Sendable>: Error, Sendable, CustomStringConvertible {
        public var outputs: [Output?]
        public var failures: [TaskFailure]
        public var description: String {
            "\(failures.count) of \(outputs.count) tasks failed; first: \(failures.first.map(\.description) ?? "none")"
        }
    }

    /// Runs `kind` over `inputs` and returns the outputs in input order; throws
    /// ``MapFailure`` when a task failed on every attempt (with the others' outputs).
    /// `deadline` (seconds per attempt) and `retries` default to the settings' task ones;
    /// `share` (owner, priority, cap) to the submitting user's at the default priority.
    public func map<Kind: TaskKind>(
        _ kind: Kind.Type, over inputs: [Kind.Input], deadline: Double? = nil, retries: Int? = nil, share: JobShare? = nil,
        progress: @escaping @Sendable (Progress) -> Void = { _ in }
    ) async throws -> [Kind.Output] {
        var outputs = [Kind.Output?](repeating: nil, count: inputs.count)
        var failures: [TaskFailure] = []
        for try await (index, result) in mapUnordered(kind, over: inputs, deadline: deadline, retries: retries, share: share, progress: progress) {
            switch result {
            case .success(let output): outputs[index] = output
            case .failure(let failure): failures.append(failure)
            }
        }
        try Task.checkCancellation()
        guard failures.isEmpty else {
            throw MapFailure(outputs: outputs, failures: failures.sorted { $0.index < $1.index })
        }
        return outputs.map { $0! }
    }

    /// Runs `kind` over `inputs` and yields each task's result as it ends: the input's
    /// index, and the output or the task's failure. Ending the iteration early cancels
    /// the rest. Throws before anything runs when an input is refused by this program's
    /// own check of the kind, or no alive node runs it.
    public func mapUnordered<Kind: TaskKind>(
        _ kind: Kind.Type, over inputs: [Kind.Input], deadline: Double? = nil, retries: Int? = nil, share: JobShare? = nil,
        progress: @escaping @Sendable (Progress) -> Void = { _ in }
    ) -> AsyncThrowingStream<(index: Int, result: Result<Kind.Output, TaskFailure>), any Error> {
        let (stream, continuation) = AsyncThrowingStream<(index: Int, result: Result<Kind.Output, TaskFailure>), any Error>.makeStream()
        let work = Task {
            do {
                let encoder = JSONEncoder()
                let json = try inputs.map { String(decoding: try encoder.encode($0), as: UTF8.self) }
                let decoder = JSONDecoder()
                try await self.run(kind: Kind.name, schema: Kind.schema, inputs: json, deadline: deadline, retries: retries, share: share, progress: progress, onOutcome: { outcome in
                    if let output = outcome.output {
                        do {
                            continuation.yield((outcome.task, .success(try decoder.decode(Kind.Output.self, from: Data(output.utf8)))))
                        } catch {
                            let reason = "its output does not decode as \(Kind.Output.self): \(error)"
                            let failure = JobRunner.Failure(attempt: outcome.attempts, node: outcome.node ?? "", reason: reason)
                            continuation.yield((outcome.task, .failure(TaskFailure(index: outcome.task, failures: outcome.failures + [failure]))))
                        }
                    } else if !outcome.cancelled {
                        continuation.yield((outcome.task, .failure(TaskFailure(index: outcome.task, failures: outcome.failures))))
                    }
                })
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in work.cancel() }
        return stream
    }

    /// Where a job of tasks runs: its id, the node that coordinates it (the one the
    /// client joined first), and the nodes its tasks may go to.
    public struct Plan: Sendable, Hashable {
        public var job: String
        public var coordinator: String
        public var nodes: [String]
    }

    /// Runs `kind` at `schema` over JSON `inputs` as a job the cluster keeps: the node
    /// the client joined first coordinates it and stores its report (`spokes jobs`,
    /// `spokes result`, `spokes cancel` find it). `onStart` hears the job's id and nodes
    /// once it starts (its id is `jobPrefix-` and 8 hex digits), `onOutcome` each task's end (once per task; a task cancelled
    /// before it started has none). Returns the stored report. Cancelling the calling
    /// task cancels the job and still returns its report. When the coordinator is lost
    /// and another member took the job over (a replicated job), the client follows it
    /// there (`onReattaching` hears the coordinator was lost) and still returns the whole
    /// report; a job no member took over within 3 s fails with ``CoordinatorLost``. Throws
    /// ``JobRefused`` only when the node would not run it (e.g. ``NoNodeRunsKind``: the job never
    /// runs), ``CoordinatorLost`` when the coordinator goes away after it took the job or
    /// stops running it, and no member runs it (the job may go on). The
    /// engine under ``map(_:over:deadline:retries:progress:)``, for callers with JSON in
    /// hand (`spokes map`, `spokes sweep`).
    @discardableResult
    public func run(
        kind: String, schema: TaskSchema?, inputs: [String], deadline: Double? = nil, retries: Int? = nil, title: String? = nil,
        share: JobShare? = nil, jobPrefix: String = "map", progress: @escaping @Sendable (Progress) -> Void = { _ in }, onStart: @escaping @Sendable (Plan) -> Void = { _ in },
        onOutcome: @escaping @Sendable (JobRunner.Outcome) -> Void = { _ in }, onReattaching: (@Sendable (CoordinatorLost) -> Void)? = nil
    ) async throws -> TaskJobReport {
        let settings = system.settings
        if registry.contains(kind) {
            for (index, input) in inputs.enumerated() {
                do {
                    try registry.check(kind: kind, input: input, settings: settings)
                } catch {
                    throw InputRefused(index: index, error: error)
                }
            }
        }
        let id = JobIdentifier.make(jobPrefix, runtime: system.runtime)
        var spec = TaskJobSpec(
            id: id, kind: kind, schema: schema ?? registry.schema(of: kind), title: title ?? "\(inputs.count) x \(kind)", inputs: inputs,
            deadline: deadline ?? settings.taskDeadline, retries: retries ?? settings.taskRetries)
        spec.share = share ?? .ofSubmitter()
        try spec.checkRanges()
        let bytes = try JSONEncoder().encode(spec).count
        // The call's frame also carries its envelope: leave it room.
        guard bytes + 4096 <= settings.maximumFrameSize else {
            throw JobTooLarge(bytes: bytes, limit: settings.maximumFrameSize)
        }
        let tally = Mutex((progress: Progress(total: inputs.count, done: 0, failed: 0, retries: 0, perNode: [:]), delivered: Set<Int>(), closed: false))
        let accepted = Mutex<Plan?>(nil)
        /// Hands an outcome to the caller once per task, never after the report.
        @Sendable func deliver(_ outcome: JobRunner.Outcome) {
            let now = tally.withLock { tally -> Progress? in
                guard !tally.closed, tally.delivered.insert(outcome.task).inserted else { return nil }
                if let node = outcome.node {
                    tally.progress.done += 1
                    tally.progress.perNode[node, default: 0] += 1
                } else if !outcome.cancelled {
                    tally.progress.failed += 1
                }
                tally.progress.retries += max(0, outcome.attempts - 1)
                return tally.progress
            }
            guard let now else { return }
            onOutcome(outcome)
            progress(now)
        }
        let listener = TaskJobListener(actorSystem: system, tasks: inputs.count, onAccepted: { job, coordinator, nodes in
            let plan = Plan(job: job, coordinator: coordinator, nodes: nodes)
            accepted.withLock { $0 = plan }
            onStart(plan)
        }, onOutcome: deliver)
        let desk = try TaskJobs.resolve(id: ActorID(node: entry, name: TaskJobs.wellKnownName), using: system)
        let entryAddress = system.connectedPeers.first { $0.node == entry }?.address ?? entry.name
        let submission = JobSubmission(job: id, entry: entry, entryAddress: entryAddress, client: system, questionTimeout: callTimeout, patience: 3)
        let (system, submitted) = (system, spec)
        let report = try await submission.run(
            accepted: { accepted.withLock { $0 != nil } }, stoppedRunning: { $0 == "TaskJobError" }, onReattaching: { onReattaching?($0) },
            call: { try await desk.submit(submitted, listener: listener) },
            cancelAtCoordinator: { _ = try? await desk.cancelHere(job: id, reason: "cancelled by the submitter") },
            ask: { node, cancelling in try await Self.ask(node, about: id, cancelling: cancelling, using: system) })
        withExtendedLifetime(listener) {}
        for outcome in report.outcomes where !(outcome.cancelled && outcome.attempts == 0) { deliver(outcome) }
        tally.withLock { $0.closed = true }
        return report
    }

    /// What `node` knows of `job`, for a client following it (``JobSubmission``): its
    /// report, or whether it runs or holds it. Once `cancelling`, a member that runs it is
    /// asked to cancel it (its report, saying so, ends the follow).
    static func ask(
        _ node: NodeID, about job: String, cancelling: Bool, using system: ClusterSystem
    ) async throws -> LostJobFollower.Answer<TaskJobReport> {
        let desk = try TaskJobs.resolve(id: ActorID(node: node, name: TaskJobs.wellKnownName), using: system)
        switch try await desk.lookup(job) {
        case .finished(let report): return .ended(report)
        case .running:
            if cancelling, let report = try await desk.cancelHere(job: job, reason: "cancelled by the submitter") { return .ended(report) }
            return .running
        case .stalled(let reason): return .stalled(reason)
        case .unknown: return .unknown
        }
    }

    /// A job whose inputs do not fit in one call to its coordinator.
    public struct JobTooLarge: Error, Sendable, CustomStringConvertible {
        public var bytes: Int
        public var limit: Int
        public var description: String {
            "the job's inputs come to \(bytes) bytes; a call carries at most \(limit) (limits.max_frame_bytes): split them into several jobs"
        }
    }

    /// An input this program's own check of the kind refused: nothing was sent.
    public struct InputRefused: Error, Sendable, CustomStringConvertible {
        public var index: Int
        public var error: TaskError
        public var description: String { "input \(index): \(error)" }
    }
}
