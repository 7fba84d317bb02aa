import Distributed
import SpokesCluster
import SpokesConcurrency
import Synchronization

/// Every node's well-known job desk (name `jobs`): clients submit bike jobs here, and
/// the node that receives a job coordinates it.
public distributed actor JobService {
    public typealias ActorSystem = ClusterSystem

    public static let wellKnownName = "jobs"

    /// Why a submission was refused.
    public enum Refusal: Error, Sendable, Codable, Equatable, CustomStringConvertible {
        case duplicateJob(String)
        /// A job parameter over this node's limit (`setting` names the limit in cluster.yaml).
        case tooLarge(parameter: String, value: Int, limit: Int, setting: String)

        public var description: String {
            switch self {
            case .duplicateJob(let id):
                "a job with id \(id) is already running here"
            case .tooLarge(let parameter, let value, let limit, let setting):
                "the job has \(value) \(parameter); this node accepts at most \(limit) (\(setting) in its cluster.yaml)"
            }
        }
    }

    /// Refuses a job over this node's limits on users, paths and stations.
    static func checkLimits(of job: BikeJob, settings: ClusterSettings) throws(Refusal) {
        let checks = [
            ("users", job.options.users, settings.maximumUsers, "limits.max_users"),
            ("paths per user", job.options.paths, settings.maximumPaths, "limits.max_paths"),
            ("stations", job.network.stations.count, settings.maximumStations, "limits.max_stations"),
        ]
        for (parameter, value, limit, setting) in checks where value > limit {
            throw .tooLarge(parameter: parameter, value: value, limit: limit, setting: setting)
        }
    }

    private let node: ClusterNode
    private let store: JobStore
    /// The jobs coordinated here now: what each runs, and the task running it.
    private var running: [String: (job: BikeJob, work: Task<SimulationReport, any Error>)] = [:]
    /// The last reports finished here, newest first, so the dashboard need not read the store.
    private var recentReports: [SimulationReport] = []
    private static let recentReportCount = 10

    public init(actorSystem: ClusterSystem, node: ClusterNode) {
        self.actorSystem = actorSystem
        self.node = node
        store = JobStore(directory: node.settings.dataDirectory)
    }

    /// Runs `job` with this node as coordinator and returns its report. Progress goes to
    /// `listener` (an actor on the submitting client) about ten times a second.
    public distributed func submit(_ job: BikeJob, listener: JobListener?) async throws -> SimulationReport {
        guard running[job.id] == nil else { throw Refusal.duplicateJob(job.id) }
        try job.checkRanges()
        do {
            try Self.checkLimits(of: job, settings: node.settings)
        } catch {
            actorSystem.rejections.count(.jobTooLarge)
            throw error
        }
        let node = node
        let work = Task {
            try await job.run(on: node) { progress in
                guard let listener else { return }
                Task { try? await listener.progress(progress) }
            }
        }
        running[job.id] = (job, work)
        defer { running[job.id] = nil }
        let report = try await withTaskCancellationHandler {
            try await work.value
        } onCancel: {
            work.cancel()
        }
        recentReports.insert(report, at: 0)
        recentReports = Array(recentReports.prefix(Self.recentReportCount))
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
        try recentReports.first { $0.job == job } ?? store.report(of: job)
    }

    /// A bike job's network as it was when the job started.
    public struct NetworkAtStart: Sendable, Hashable, Codable {
        /// The network's name, e.g. `BikeMi`.
        public var name: String
        /// Every station, in network order.
        public var stations: [SimulationReport.StationState]
    }

    /// The network of a bike job coordinated here, as it was when the job started; nil
    /// when this node knows no such job (or only an old report without it).
    public distributed func networkAtStart(of job: String) throws -> NetworkAtStart? {
        if let running = running[job]?.job {
            return NetworkAtStart(name: running.network.name, stations: running.network.stations.map(SimulationReport.StationState.init))
        }
        guard let report = try report(of: job), let stations = report.stationsBefore else { return nil }
        return NetworkAtStart(name: report.network.name, stations: stations)
    }

    /// Bikes at each station of a bike job coordinated here: now while it runs, at its end
    /// once it has finished; nil when this node knows no such job.
    public distributed func stationBikes(of job: String) async throws -> [Int]? {
        if let running = running[job]?.job {
            var bikes: [Int] = []
            bikes.reserveCapacity(running.network.stations.count)
            for index in running.network.stations.indices {
                let id = ActorID(node: actorSystem.node, name: JobStation.name(job: job, index: index))
                guard let station = try? JobStation.resolve(id: id, using: actorSystem) else {
                    return running.network.stations.map(\.freeBikes)
                }
                bikes.append(try await station.snapshot().freeBikes)
            }
            return bikes
        }
        return try report(of: job)?.stations.map(\.freeBikes)
    }

    /// Cancels a running job: its users stop at their next move, and `submit` returns
    /// the report so far.
    public distributed func cancel(job: String) {
        running[job]?.work.cancel()
    }

    /// What a batch of tasks of one kind came to (see ``runBatch(kind:input:count:deadline:retries:)``).
    public struct BatchReport: Sendable, Codable, Hashable {
        /// The batch's job id, as its task attempts carry it (see ``TaskTimeline``).
        public var job: String
        public var tasks: Int
        public var succeeded: Int
        /// Failed attempts, over all tasks.
        public var retries: Int
        /// Real seconds from the first task scheduled to the last result.
        public var wallTime: Double
        /// When the first task was scheduled, in ``MonotonicClock`` seconds.
        public var startedAt: Double
        public var tasksPerNode: [String: Int]
        /// When each retried attempt started, in ``MonotonicClock`` seconds (comparable
        /// with the same clock read in another process of this machine).
        public var retryStarts: [Double]
    }

    /// Runs `count` tasks of any registered kind, all with the same input, with this node
    /// as coordinator: the generic path benchmarks and apps use.
    public distributed func runBatch(kind: String, input: String, count: Int, deadline: Double, retries: Int) async throws -> BatchReport {
        guard (1...10_000_000).contains(count) else { throw TaskError.invalidInput(kind: kind, reason: "count \(count)") }
        try JobRunner.checkRanges(deadline: deadline, retries: retries)
        let (systems, following) = try node.makeSystems()
        defer { following.cancel() }
        let expected = 1 + node.members.count { $0.state == .alive }
        _ = try? await withTimeout(seconds: 5) { try await systems.waitForSystems(atLeast: expected) }
        let job = "batch-\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"
        let runner = JobRunner(systems: systems, job: job, kind: kind, deadline: deadline, retries: retries)
        let board = node.jobBoard.track(job: job, kind: kind, title: "\(count) x \(kind)", total: count)
        defer { board.end(cancelled: Task.isCancelled) }
        let clock = ContinuousClock()
        let start = clock.now
        let startedAt = MonotonicClock.now
        let retryStarts = Mutex<[Double]>([])
        let outcomes = await runner.run(count: count, input: { _, _ in input }, onEvent: { event in
            board.record(event)
            if case .started(_, let attempt, _) = event, attempt > 1 {
                let now = MonotonicClock.now
                retryStarts.withLock { $0.append(now) }
            }
        })
        let wall = (clock.now - start).seconds
        var perNode: [String: Int] = [:]
        for outcome in outcomes { if let node = outcome.node { perNode[node, default: 0] += 1 } }
        return BatchReport(
            job: job, tasks: count, succeeded: outcomes.count { $0.output != nil }, retries: outcomes.reduce(0) { $0 + $1.failures.count },
            wallTime: wall, startedAt: startedAt, tasksPerNode: perNode, retryStarts: retryStarts.withLock { $0 })
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

    public distributed func progress(_ progress: JobProgress) throws {
        try progress.checkRanges()
        onProgress(progress)
    }
}
