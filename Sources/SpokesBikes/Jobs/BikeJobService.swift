import Distributed
import FoundationEssentials
import SpokesCluster
import SpokesConcurrency
import SpokesJobs
import Synchronization

/// Every node's desk for bike jobs (name `bikejobs`): clients submit bike jobs here, and
/// the node that receives a job coordinates it on its job desk (``TaskJobs``), as the
/// bike workload (Docs/one-job-layer.md): that desk keeps it in its group, runs its
/// users, lets another node take it over, and stores its report; the node's `jobs` desk
/// (``JobService``) lists and cancels it with every other job. This desk answers what
/// only bikes have: the submitter's progress, the report as a ``SimulationReport``, a
/// job's network and its stations' bikes for the dashboard.
public distributed actor BikeJobService {
    /// The node's runtime clock: what this desk's calls to others are bounded on.
    private nonisolated var clock: any RuntimeClock { actorSystem.runtime.clock }
    public typealias ActorSystem = ClusterSystem

    public static let wellKnownName = "bikejobs"

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
            ("users", job.options.users, BikeLimits.users.integer(in: settings), BikeLimits.users.path),
            ("paths per user", job.options.paths, BikeLimits.paths.integer(in: settings), BikeLimits.paths.path),
            ("stations", job.network.stations.count, BikeLimits.stations.integer(in: settings), BikeLimits.stations.path),
        ]
        for (parameter, value, limit, setting) in checks where value > limit {
            throw .tooLarge(parameter: parameter, value: value, limit: limit, setting: setting)
        }
    }

    private let node: ClusterNode
    /// The node's store of finished jobs, shared with its ``JobService``.
    private let store: JobStore
    /// The bike jobs the node's job desk runs now (Docs/one-job-layer.md).
    private let live: LiveBikeRuns
    /// The last reports finished here, newest first, so the dashboard need not read the store.
    private var recentReports: [SimulationReport] = []
    private static let recentReportCount = 10

    /// Reads finished jobs from `store` (the node's ``JobService/store``). `live`: the
    /// bike jobs the node's job desk (``TaskJobs``) runs, as the bike workload it
    /// registered lists them.
    public init(actorSystem: ClusterSystem, node: ClusterNode, store: JobStore, live: LiveBikeRuns = LiveBikeRuns()) {
        self.actorSystem = actorSystem
        self.node = node
        self.store = store
        self.live = live
    }

    /// Hosts a node's two job desks under their well-known names: `bikejobs` (this one)
    /// and `jobs` (``JobService``, which lists and cancels bike jobs with every other),
    /// both reading `store` (nil: the job store of the node's data directory). The node's
    /// job desk runs bike jobs and stores its reports in `store`: one the node hosts
    /// already without the bike workload (a test's node) is given both, else one is hosted.
    public static func hostDesks(on node: ClusterNode, store: JobStore? = nil, live: LiveBikeRuns = LiveBikeRuns()) async -> (jobs: JobService, bikes: BikeJobService) {
        let system = node.system
        let store = store ?? JobStore(of: node)
        if let desk = TaskJobs.hosted(on: node) {
            await desk.whenLocal { $0.addIfAbsent(workload: BikeWorkload.name, BikeWorkload.workload(live: live), storingIn: store) }
        } else {
            var workloads = JobWorkloads()
            workloads.register(BikeWorkload.name, BikeWorkload.workload(live: live))
            TaskJobs.host(on: node, history: store, workloads: workloads)
        }
        let bikes = ClusterSystem.withWellKnownName(wellKnownName) {
            BikeJobService(actorSystem: system, node: node, store: store, live: live)
        }
        let jobs = ClusterSystem.withWellKnownName(JobService.wellKnownName) {
            JobService(actorSystem: system, node: node, store: store)
        }
        return (jobs, bikes)
    }

    /// Runs `job` with this node as coordinator and returns its report. The listener (an
    /// actor on the submitting client) hears the job is accepted before it starts, then
    /// its progress about ten times a second.
    ///
    /// The job belongs to the node, not to the call: if the client goes away, the job runs
    /// on and its report is stored (``cancel(job:origin:)`` stops it). The report says
    /// whether it was stored (`stored`, `storeError`). The job is committed to its
    /// replicas (or this node's disk) before the listener hears it was accepted, and
    /// another node takes it over if this one dies; this call then fails with
    /// ``BikeJob/LostLead``, and the client asks any node for the job (`spokes result JOB --wait`).
    public distributed func submit(_ job: BikeJob, listener: JobListener?) async throws -> SimulationReport {
        try job.checkRanges()
        do {
            try Self.checkLimits(of: job, settings: node.settings)
        } catch {
            actorSystem.rejections.count(.jobTooLarge)
            throw error
        }
        _ = try job.validated(settings: node.settings)
        guard let desk = TaskJobs.hosted(on: node) else { throw NoJobDesk(node: actorSystem.node.name) }
        return try await submit(job, to: desk, listener: listener)
    }

    /// A node without a job desk (one assembled by hand, without ``hostDesks(on:store:live:)``).
    struct NoJobDesk: Error, CustomStringConvertible {
        var node: String
        var description: String { "node \(node) runs no job desk, so it takes no bike jobs" }
    }

    /// Runs `job` on the node's job desk as the bike workload: the desk keeps it in its
    /// group (in the format every member reads: ``BikeJobMachine/format()`` while one does
    /// not speak protocol 7), runs its users, takes it over elsewhere if this node dies,
    /// and stores its report. `listener` hears it was accepted, then its progress, about
    /// ten times a second, from the node's record of the job. A call cancelled by its
    /// submitter cancels the job.
    private func submit(_ job: BikeJob, to desk: TaskJobs, listener: JobListener?) async throws -> SimulationReport {
        let spec = try job.taskJobSpec(settings: node.settings)
        let clock = clock
        let board = node.jobBoard
        let relay = TaskJobListener(actorSystem: actorSystem, tasks: spec.inputs.count, onAccepted: { id, coordinator, _ in
            guard let listener else { return }
            Task { _ = try? await withTimeout(seconds: 2, clock: clock) { try await listener.accepted(job: id, coordinator: coordinator) } }
        }, onOutcome: { _ in })
        let progress = listener.map { listener in
            Task {
                let start = clock.now
                var sent: (progress: JobProgress, at: Double)?
                while !Task.isCancelled {
                    try? await clock.sleep(for: 0.1)
                    guard let record = board.record(of: job.id) else { continue }
                    let now = clock.now
                    var progress = JobProgress(record: record, elapsed: now - start)
                    // Only what changed, and at least once a second for the elapsed time.
                    if let sent, now - sent.at < 1 {
                        progress.elapsed = sent.progress.elapsed
                        if progress == sent.progress { continue }
                        progress.elapsed = now - start
                    }
                    sent = (progress, now)
                    try? await listener.progress(progress)
                }
            }
        }
        defer { progress?.cancel() }
        let work = Task { try await desk.submit(spec, listener: relay) }
        let done: TaskJobReport
        do {
            done = try await withTaskCancellationHandler {
                try await work.value
            } onCancel: {
                Task { _ = try? await desk.cancelHere(job: job.id, reason: JobService.CancelOrigin.submitter.reason) }
            }
        } catch TaskJobError.takenOver {
            throw BikeJob.LostLead(job: job.id, node: actorSystem.node.name)
        } catch TaskJobError.duplicateJob {
            throw Refusal.duplicateJob(job.id)
        }
        withExtendedLifetime(relay) {}
        guard let report = SimulationReport(workloadOf: done) else {
            throw BikeWorkload.NotABikeJob(job: job.id)
        }
        remember(report)
        return report
    }

    /// Keeps `report` among the last finished here, for the dashboard.
    private func remember(_ report: SimulationReport) {
        recentReports.insert(report, at: 0)
        recentReports = Array(recentReports.prefix(Self.recentReportCount))
    }

    /// A finished job's report, from this node's data directory.
    public distributed func report(of job: String) async throws -> SimulationReport? {
        if let recent = recentReports.first(where: { $0.job == job }) { return recent }
        let store = store
        return try await runBlocking("spokes.job-store") { try store.report(of: job) }
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
    public distributed func networkAtStart(of job: String) async throws -> NetworkAtStart? {
        if let running = live[job]?.job {
            return NetworkAtStart(name: running.network.name, stations: running.network.stations.map(SimulationReport.StationState.init))
        }
        guard let report = try await report(of: job), let stations = report.stationsBefore else { return nil }
        return NetworkAtStart(name: report.network.name, stations: stations)
    }

    /// Bikes at each station of a bike job coordinated here: now while it runs, at its end
    /// once it has finished; nil when this node knows no such job.
    public distributed func stationBikes(of job: String) async throws -> [Int]? {
        if let run = live[job] {
            return run.job.network.stations.indices.map { run.ledger.station($0).freeBikes }
        }
        return try await report(of: job)?.stations.map(\.freeBikes)
    }
}

/// A client's ear for a job's progress: the coordinator calls it as the job runs.
public distributed actor JobListener {
    public typealias ActorSystem = ClusterSystem

    private let onProgress: @Sendable (JobProgress) -> Void
    private let onAccepted: @Sendable (_ job: String, _ coordinator: String) -> Void

    public init(
        actorSystem: ClusterSystem, onAccepted: @escaping @Sendable (_ job: String, _ coordinator: String) -> Void = { _, _ in },
        onProgress: @escaping @Sendable (JobProgress) -> Void
    ) {
        self.actorSystem = actorSystem
        self.onAccepted = onAccepted
        self.onProgress = onProgress
    }

    public distributed func progress(_ progress: JobProgress) throws {
        try progress.checkRanges()
        onProgress(progress)
    }

    /// The coordinator accepted the job: it starts now.
    public distributed func accepted(job: String, coordinator: String) {
        onAccepted(job, coordinator)
    }
}
