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
    private var running: [String: Task<SimulationReport, any Error>] = [:]

    public init(actorSystem: ClusterSystem, node: ClusterNode) {
        self.actorSystem = actorSystem
        self.node = node
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
        return try await withTaskCancellationHandler {
            try await work.value
        } onCancel: {
            work.cancel()
        }
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
