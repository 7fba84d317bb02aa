import Distributed
import SpokesCluster

/// Every node's well-known job desk (name `jobs`): clients submit bike jobs here, and
/// the node that receives a job coordinates it.
public distributed actor JobService {
    public typealias ActorSystem = ClusterSystem

    public static let wellKnownName = "jobs"

    /// Why a submission was refused.
    public enum Refusal: Error, Sendable, Codable, CustomStringConvertible {
        case duplicateJob(String)

        public var description: String {
            switch self {
            case .duplicateJob(let id): "a job with id \(id) is already running here"
            }
        }
    }

    private let node: ClusterNode
    private let store: JobStore
    private var running: [String: Task<SimulationReport, any Error>] = [:]

    public init(actorSystem: ClusterSystem, node: ClusterNode) {
        self.actorSystem = actorSystem
        self.node = node
        store = JobStore(directory: node.settings.dataDirectory)
    }

    /// Runs `job` with this node as coordinator and returns its report. Progress goes to
    /// `listener` (an actor on the submitting client) about ten times a second.
    public distributed func submit(_ job: BikeJob, listener: JobListener?) async throws -> SimulationReport {
        guard running[job.id] == nil else { throw Refusal.duplicateJob(job.id) }
        let node = node
        let work = Task {
            try await job.run(on: node) { progress in
                guard let listener else { return }
                Task { try? await listener.progress(progress) }
            }
        }
        running[job.id] = work
        defer { running[job.id] = nil }
        let report = try await withTaskCancellationHandler {
            try await work.value
        } onCancel: {
            work.cancel()
        }
        do {
            try store.append(report, coordinator: actorSystem.node.name)
        } catch {
            actorSystem.log("cannot store job \(job.id) in \(store.path): \(error)")
        }
        return report
    }

    /// The finished jobs stored under this node's data directory, oldest first.
    public distributed func finishedJobs() throws -> [JobStore.Summary] {
        try store.summaries()
    }

    /// A finished job's report, from this node's data directory.
    public distributed func report(of job: String) throws -> SimulationReport? {
        try store.report(of: job)
    }

    /// Cancels a running job: its users stop at their next move, and `submit` returns
    /// the report so far.
    public distributed func cancel(job: String) {
        running[job]?.cancel()
    }

    /// Ids of the jobs this node coordinates now.
    public distributed func runningJobs() -> [String] {
        running.keys.sorted()
    }
}

/// A client's ear for a job's progress: the coordinator calls it as the job runs.
public distributed actor JobListener {
    public typealias ActorSystem = ClusterSystem

    private let onProgress: @Sendable (JobProgress) -> Void

    public init(actorSystem: ClusterSystem, onProgress: @escaping @Sendable (JobProgress) -> Void) {
        self.actorSystem = actorSystem
        self.onProgress = onProgress
    }

    public distributed func progress(_ progress: JobProgress) {
        onProgress(progress)
    }
}
