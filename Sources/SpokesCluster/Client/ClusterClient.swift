import Foundation
import SpokesConcurrency
import Synchronization

/// A program's connection to a cluster, from Swift code: what `spokes run` does on the
/// command line. The client is not a member; it asks one node for the members, places
/// each task on a member that runs its kind (``KindPlacement``) with a free place, and
/// retries a failed task on another member.
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
/// Cancelling the calling task cancels the tasks that run (and the ones not started).
/// Here the client coordinates: it must stay until the end, and nothing is stored on
/// the nodes (`spokes map` submits a job the cluster keeps).
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

    /// A client over `system`, already joined to `entry` (``connect(to:settings:registry:timeout:)``
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
    /// runs (for checking inputs and choosing versions).
    public static func connect(
        to address: SocketAddress? = nil, settings: ClusterSettings = ClusterSettings(), registry: TaskRegistry = TaskRegistry(),
        timeout: Double = 3
    ) async throws -> ClusterClient {
        let target: SocketAddress
        if let address {
            target = address
        } else {
            target = try await NodeFinder.firstNode(settings: settings, timeout: timeout)
        }
        var clientSettings = settings
        clientSettings.host = "127.0.0.1"
        clientSettings.port = 0
        clientSettings.joinsAnyCluster = clientSettings.joinsAnyCluster || address != nil
        // Attempts are bounded by their deadline (a queued one by twice that), not by the
        // call timeout, which bounds every other call here.
        clientSettings.callTimeout = 2 * JobRunner.deadlineRange.upperBound + 30
        clientSettings.handshakeTimeout = min(settings.handshakeTimeout, settings.callTimeout)
        let system = try ClusterSystem(settings: clientSettings, isMember: false)
        do {
            let peer = try await withTimeout(seconds: settings.callTimeout) { try await system.join(target) }
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
    /// `deadline` (seconds per attempt) and `retries` default to the settings' task ones.
    public func map<Kind: TaskKind>(
        _ kind: Kind.Type, over inputs: [Kind.Input], deadline: Double? = nil, retries: Int? = nil,
        progress: @escaping @Sendable (Progress) -> Void = { _ in }
    ) async throws -> [Kind.Output] {
        var outputs = [Kind.Output?](repeating: nil, count: inputs.count)
        var failures: [TaskFailure] = []
        for try await (index, result) in mapUnordered(kind, over: inputs, deadline: deadline, retries: retries, progress: progress) {
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
        _ kind: Kind.Type, over inputs: [Kind.Input], deadline: Double? = nil, retries: Int? = nil,
        progress: @escaping @Sendable (Progress) -> Void = { _ in }
    ) -> AsyncThrowingStream<(index: Int, result: Result<Kind.Output, TaskFailure>), any Error> {
        let (stream, continuation) = AsyncThrowingStream<(index: Int, result: Result<Kind.Output, TaskFailure>), any Error>.makeStream()
        let work = Task {
            do {
                let encoder = JSONEncoder()
                let json = try inputs.map { String(decoding: try encoder.encode($0), as: UTF8.self) }
                let decoder = JSONDecoder()
                try await self.run(kind: Kind.name, schema: Kind.schema, inputs: json, deadline: deadline, retries: retries, progress: progress, onOutcome: { outcome in
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

    /// Where a map's tasks go: the placement decision, and the alive members that could
    /// not be reached (left out).
    public struct Plan: Sendable {
        public var placement: KindPlacement
        public var unreachable: [String]
    }

    /// Runs `kind` at `schema` over JSON `inputs`, calling `onStart` once the workers are
    /// chosen and `onOutcome` as each task ends; returns every task's outcome in input
    /// order. The engine under ``map(_:over:deadline:retries:progress:)``, for callers
    /// with JSON in hand (`spokes run`).
    @discardableResult
    public func run(
        kind: String, schema: TaskSchema?, inputs: [String], deadline: Double? = nil, retries: Int? = nil,
        progress: @escaping @Sendable (Progress) -> Void = { _ in }, onStart: @Sendable (Plan) -> Void = { _ in },
        onOutcome: @escaping @Sendable (JobRunner.Outcome) -> Void = { _ in }
    ) async throws -> [JobRunner.Outcome] {
        let settings = system.settings
        let deadline = deadline ?? settings.taskDeadline
        let retries = retries ?? settings.taskRetries
        try JobRunner.checkRanges(deadline: deadline, retries: retries)
        if registry.contains(kind) {
            for (index, input) in inputs.enumerated() {
                do {
                    try registry.check(kind: kind, input: input, settings: settings)
                } catch {
                    throw InputRefused(index: index, error: error)
                }
            }
        }
        let (systems, plan) = try await workers(for: kind, schema: schema ?? registry.schema(of: kind))
        onStart(plan)
        let costs = inputs.map { registry.cost(kind: kind, input: $0) ?? .cpu }
        let runner = JobRunner(
            systems: systems, job: JobIdentifier.make("map"), kind: kind, deadline: deadline, retries: retries, costOf: { costs[$0] })
        let tally = Mutex(Progress(total: inputs.count, done: 0, failed: 0, retries: 0, perNode: [:]))
        return await runner.run(count: inputs.count, input: { task, _ in inputs[task] }, onOutcome: { outcome in
            let now = tally.withLock { tally in
                if let node = outcome.node {
                    tally.done += 1
                    tally.perNode[node, default: 0] += 1
                } else if !outcome.cancelled {
                    tally.failed += 1
                }
                tally.retries += max(0, outcome.attempts - 1)
                return tally
            }
            onOutcome(outcome)
            progress(now)
        })
    }

    /// An input this program's own check of the kind refused: nothing was sent.
    public struct InputRefused: Error, Sendable, CustomStringConvertible {
        public var index: Int
        public var error: TaskError
        public var description: String { "input \(index): \(error)" }
    }

    /// The members that run `kind` at the job's version, as a ``Systems`` whose first
    /// ("local") entry is one of them; and the plan.
    public func workers(for kind: String, schema: TaskSchema?) async throws -> (Systems, Plan) {
        let status = try NodeStatus.resolve(id: ActorID(node: entry, name: NodeStatus.wellKnownName), using: system)
        let members = try await withTimeout(seconds: callTimeout) { try await status.members() }
        let callTimeout = callTimeout
        let system = system
        var reached: [(name: String, worker: ScanSystem, slots: Int, waitingSlots: Int)] = []
        var offers: [KindPlacement.Offer] = []
        var unreachable: [String] = []
        // Connected nodes (the entry, at least) are not dialled again: a second connection
        // to one node would be a duplicate, closed with the calls on it.
        let connected = Dictionary(system.connectedPeers.map { ($0.node.name, $0.node) }, uniquingKeysWith: { first, _ in first })
        for member in members where member.state == Member.State.alive.rawValue {
            func node() async -> NodeID? {
                if let known = connected[member.name] { return known }
                guard let address = try? SocketAddress(parsing: member.address) else { return nil }
                return try? await withTimeout(seconds: callTimeout, operation: { try await system.join(address) }).node
            }
            guard let peer = await node(),
                  let worker = try? ScanSystem.resolve(id: ActorID(node: peer, name: ScanSystem.wellKnownName), using: system)
            else {
                offers.append(KindPlacement.Offer(node: member.name, schemas: nil))
                unreachable.append(member.name)
                continue
            }
            reached.append((member.name, worker, member.slots, member.waitingSlots))
            offers.append(KindPlacement.Offer(node: member.name, schemas: try? await withTimeout(seconds: callTimeout) { try await worker.kinds() }))
        }
        let placement = try KindPlacement(kind: kind, submitter: schema, offers: offers)
        let workers = reached.filter { placement.nodes.contains($0.name) }
        let head = workers[0]
        let systems = Systems(
            local: head.worker, node: head.name, slots: head.slots, waitingSlots: head.waitingSlots,
            others: workers.dropFirst().map { ($0.name, $0.worker, $0.slots, $0.waitingSlots) })
        return (systems, Plan(placement: placement, unreachable: unreachable))
    }
}
