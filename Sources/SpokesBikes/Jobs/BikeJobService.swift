import Distributed
import FoundationEssentials
import SpokesCluster
import SpokesConcurrency
import SpokesJobs
import Synchronization

/// Every node's desk for bike jobs (name `bikejobs`): clients submit bike jobs here, and
/// the node that receives a job coordinates it. The node's job desk (``JobService``,
/// name `jobs`) lists and cancels them with every other job, through ``workload``.
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

    /// A job coordinated here: what it runs, the task running it, and who cancelled it.
    private struct RunningJob {
        var job: BikeJob
        /// The epoch its stations are named by (``JobStation/name(job:epoch:index:)``).
        var epoch: Int
        var work: Task<SimulationReport, any Error>
        var cancelReason: CancelReason
        var started: Date
    }

    private let node: ClusterNode
    /// The node's store of finished jobs, shared with its ``JobService``.
    private let store: JobStore
    /// Where running bike jobs are replicated (nil: on this node alone), as releases
    /// before the one job layer kept them, and as this one does until every member speaks
    /// ``ProtocolVersions/oneJobLayer``.
    private let replication: ReplicatedBikeJobs?
    /// The bike jobs the node's job desk runs now (Docs/one-job-layer.md).
    private let live: LiveBikeRuns
    /// The jobs coordinated here now (until their report is stored).
    private var running: [String: RunningJob] = [:]
    /// Jobs whose replicas are being made, before they run.
    private var starting: Set<String> = []
    /// Runs stopped because the job ended under another node: they store nothing.
    private var abandoned: Set<String> = []
    /// Finished jobs whose report the disk refused, tried again until stored.
    private var storeRetries: [String: Task<Void, Never>] = [:]
    /// The last reports finished here, newest first, so the dashboard need not read the store.
    private var recentReports: [SimulationReport] = []
    private static let recentReportCount = 10

    /// Stores finished jobs in `store` (the node's ``JobService/store``); `replication`
    /// keeps running jobs on other nodes too (nil: on this node alone).
    /// `live`: the bike jobs the node's job desk (``TaskJobs``) runs, as the bike workload
    /// it registered lists them.
    public init(actorSystem: ClusterSystem, node: ClusterNode, store: JobStore, replication: ReplicatedBikeJobs? = nil, live: LiveBikeRuns = LiveBikeRuns()) {
        self.actorSystem = actorSystem
        self.node = node
        self.replication = replication
        self.store = store
        self.live = live
    }

    /// Hosts a node's two job desks under their well-known names: `bikejobs` (this one)
    /// and `jobs` (``JobService``, which lists and cancels bike jobs with every other),
    /// both storing in `store` (nil: the job store of the node's data directory).
    public static func hostDesks(
        on node: ClusterNode, store: JobStore? = nil, replication: ReplicatedBikeJobs? = nil, live: LiveBikeRuns = LiveBikeRuns()
    ) -> (jobs: JobService, bikes: BikeJobService) {
        let system = node.system
        let store = store ?? JobStore(of: node)
        let bikes = ClusterSystem.withWellKnownName(wellKnownName) {
            BikeJobService(actorSystem: system, node: node, store: store, replication: replication, live: live)
        }
        let jobs = ClusterSystem.withWellKnownName(JobService.wellKnownName) {
            JobService(actorSystem: system, node: node, store: store, workloads: [bikes.workload])
        }
        return (jobs, bikes)
    }

    /// This desk's jobs as the node's job desk lists and cancels them.
    public nonisolated var workload: some JobWorkload { Workload(service: self) }

    /// Runs `job` with this node as coordinator and returns its report. The listener (an
    /// actor on the submitting client) hears the job is accepted before it starts, then
    /// its progress about ten times a second.
    ///
    /// The job belongs to the node, not to the call: if the client goes away, the job runs
    /// on and its report is stored (``cancel(job:origin:)`` stops it). The report says
    /// whether it was stored (`stored`, `storeError`). The job is committed to its
    /// replicas (or this node's disk) before the listener hears it was accepted, and
    /// another node takes it over if this one dies (``ReplicatedBikeJobs``); this call
    /// then fails, and the client asks any node for the job (`spokes result JOB --wait`).
    public distributed func submit(_ job: BikeJob, listener: JobListener?) async throws -> SimulationReport {
        // Until it runs, the job is starting: the watcher must not take its group over.
        guard !isRunning(job.id) else { throw Refusal.duplicateJob(job.id) }
        starting.insert(job.id)
        defer { starting.remove(job.id) }
        try job.checkRanges()
        do {
            try Self.checkLimits(of: job, settings: node.settings)
        } catch {
            actorSystem.rejections.count(.jobTooLarge)
            throw error
        }
        _ = try job.validated(settings: node.settings)
        // The job layer's one desk runs it, once every member can hold its group.
        if node.mayUse(protocolVersion: ProtocolVersions.oneJobLayer), let desk = TaskJobs.hosted(on: node),
           await desk.whenLocal({ $0.runs(workload: BikeWorkload.name) }) == true {
            return try await submit(job, to: desk, listener: listener)
        }
        let replica = try await replication?.jobStarted(job)
        let cancelReason = CancelReason()
        let work = start(job, book: nil, replica: replica, cancelReason: cancelReason, listener: listener)
        return try await withTaskCancellationHandler {
            try await work.value
        } onCancel: {
            cancelReason.set(.submitter)
            work.cancel()
        }
    }

    /// Runs `job` on the node's job desk as the bike workload (Docs/one-job-layer.md): the
    /// desk keeps it in its group, runs its users, takes it over elsewhere if this node
    /// dies, and stores its report. `listener` hears it was accepted, then its progress,
    /// about ten times a second, from the node's record of the job. A call cancelled by
    /// its submitter cancels the job.
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

    /// Runs `job` here from `book` (nil: from its start) and stores its report; the
    /// listener hears it was accepted, then its progress.
    private func start(_ job: BikeJob, book: BikeJobBook?, replica: BikeJob.Replica?, cancelReason: CancelReason, listener: JobListener?) -> Task<SimulationReport, any Error> {
        let node = node
        let coordinator = actorSystem.node.name
        let work = Task {
            do {
                // The submitter learns the id before anything runs; a silent client holds
                // the job up for at most a moment.
                if let listener {
                    _ = try? await withTimeout(seconds: 2, clock: clock) { try await listener.accepted(job: job.id, coordinator: coordinator) }
                }
                let runtime = self.actorSystem.runtime
                let began = runtime.now
                var report = try await job.run(on: node, resuming: book, replica: replica, cancelReason: { cancelReason.text }) { progress in
                    guard let listener else { return }
                    Task { try? await listener.progress(progress) }
                }
                // The job's wall time from its start, over every epoch and coordinator (a
                // job kept only here counts from its run here).
                report.wallTime = replica?.startedAt.map { max(0, runtime.unixNow - $0) } ?? runtime.now - began
                // A run abandoned to another node's (the job ended there) stores nothing.
                if self.abandoned.contains(job.id) { throw BikeJob.LostLead(job: job.id, node: coordinator) }
                return await self.finish(report)
            } catch {
                forget(job.id)
                throw error
            }
        }
        running[job.id] = RunningJob(job: job, epoch: replica?.epoch ?? 0, work: work, cancelReason: cancelReason, started: Date(timeIntervalSince1970: actorSystem.runtime.unixNow))
        return work
    }

    /// Takes over a replicated job whose coordinator is gone (this node leads its group
    /// now): runs the users that had not ended in `book`, the committed state, under
    /// `replica`'s new epoch, and stores the report. A job cancelled before runs none of
    /// its users: it ends at once with its report.
    func resume(_ job: BikeJob, book: BikeJobBook, replica: BikeJob.Replica, cancelReason reason: String?) async {
        guard !isRunning(job.id) else { return }
        // Its report is stored here already (it ended just before this node lost the lead
        // and won it back): finish it rather than run it again. (One told to its client
        // but not stored, on a full disk, is run again from its book and stored.)
        if await isStored(job.id) {
            await replication?.jobFinished(job.id)
            return
        }
        let cancelReason = CancelReason(text: reason)
        let work = start(job, book: book, replica: replica, cancelReason: cancelReason, listener: nil)
        if reason != nil { work.cancel() }
        actorSystem.log("took over job \(job.id): \(book.doneUsers.count) of \(job.options.users) users had ended\(reason.map { "; it was \($0)" } ?? "")")
    }

    /// Whether this node runs `job` now, is making its replicas, or still tries to store
    /// its report.
    func isRunning(_ job: String) -> Bool { running[job] != nil || starting.contains(job) || storeRetries[job] != nil }

    /// Stops running `job` without storing anything: another node owns it now (its
    /// replicas say it finished under another leader).
    func abandon(_ job: String) {
        storeRetries.removeValue(forKey: job)?.cancel()
        guard let entry = running[job], abandoned.insert(job).inserted else { return }
        actorSystem.log("job \(job) is another node's now: stopped running it here")
        entry.work.cancel()
    }

    /// Stores a finished job's report and says in it whether that worked.
    private func finish(_ report: SimulationReport) async -> SimulationReport {
        var report = report
        let store = store
        let coordinator = actorSystem.node.name
        let stored = report
        do {
            try await runBlocking("spokes.job-store") { try store.append(stored, coordinator: coordinator) }
            report.stored = true
        } catch {
            report.stored = false
            report.storeError = "\(error)"
            actorSystem.log("cannot store job \(report.job ?? "?"): \(error)")
        }
        remember(report)
        if let job = report.job {
            running[job] = nil
            // Only a stored report finishes the job in its replicas: one that could not be
            // stored (a full disk) leaves the job unfinished there, and is tried again here
            // until there is room (``ReportStoreRetry``); if this node loses the job's lead
            // meanwhile, the replica that leads it next runs it on and stores it. Finishing
            // it anyway lost the job: its group was removed, and no node stored or listed it
            // (found as seed 23 of the simulator's full-disk fault).
            if report.stored == true {
                await replication?.jobFinished(job)
            } else if let replication {
                storeRetries[job]?.cancel()
                let system = actorSystem
                storeRetries[job] = Task {
                    let retried = await ReportStoreRetry.keepTrying(job: job, clock: system.runtime.clock, log: { system.log($0) }) {
                        try await runBlocking("spokes.job-store") { try store.append(stored, coordinator: coordinator) }
                    }
                    if retried {
                        await replication.jobFinished(job)
                        self.markStored(job)
                    }
                    if !Task.isCancelled { self.storeRetries[job] = nil }
                }
            }
        }
        return report
    }

    /// A report stored at a later try: the recent reports say so too.
    private func markStored(_ job: String) {
        guard let index = recentReports.firstIndex(where: { $0.job == job }) else { return }
        recentReports[index].stored = true
        recentReports[index].storeError = nil
    }

    private func forget(_ job: String) {
        running[job] = nil
        abandoned.remove(job)
    }

    /// The bike jobs this node coordinates now (state `running`, with their progress),
    /// then those it holds for a coordinator that is gone.
    func runningSummaries() async -> [JobStore.Summary] {
        let coordinator = actorSystem.node.name
        let board = node.jobBoard
        let now = actorSystem.runtime.now
        let live = running.values.sorted(by: { $0.started < $1.started }).map { entry in
            let record = board.record(of: entry.job.id)
            // A job taken over tracks only the users it runs: those that ended before count as done.
            let endedBefore = entry.job.options.users - (record?.total ?? entry.job.options.users)
            var summary = JobStore.Summary(
                job: entry.job.id, state: .running, finished: nil, coordinator: coordinator, title: entry.job.network.id,
                tasks: entry.job.options.users, succeeded: endedBefore + (record?.done ?? 0), failed: record?.failed ?? 0,
                cancelled: record?.cancelled ?? 0, retries: record?.retries ?? 0,
                wallTime: record.map { max(0, now - $0.startedAt) } ?? 0)
            if let record, let share = record.share {
                summary.slots = JobSlots(
                    share: share, cost: record.cost ?? .waiting, inUse: record.perNode.values.reduce(0) { $0 + $1.running },
                    remaining: max(0, record.total - record.done - record.failed - record.cancelled))
            }
            return summary
        }
        // Replicated jobs held here whose coordinator is gone, until a replica takes them over.
        let waiting = (await replication?.heldUnfinished() ?? []).filter { running[$0.job.id] == nil }.map { held in
            JobStore.Summary(
                job: held.job.id, state: held.stalled == nil ? .running : .stalled, finished: nil, coordinator: coordinator, title: held.job.network.id,
                tasks: held.job.options.users, succeeded: held.book.doneUsers.count, failed: 0, cancelled: 0, retries: 0,
                wallTime: 0, stalledReason: held.stalled)
        }
        return live + waiting
    }

    /// Whether `job`'s report is in this node's job store.
    private func isStored(_ job: String) async -> Bool {
        if recentReports.contains(where: { $0.job == job && $0.stored == true }) { return true }
        let store = store
        return ((try? await runBlocking("spokes.job-store") { try store.report(of: job) }) ?? nil) != nil
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
        if let running = running[job]?.job ?? live[job]?.job {
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
        if let entry = running[job] {
            let running = entry.job
            var bikes: [Int] = []
            bikes.reserveCapacity(running.network.stations.count)
            for index in running.network.stations.indices {
                let id = ActorID(node: actorSystem.node, name: JobStation.name(job: job, epoch: entry.epoch, index: index))
                guard let station = try? JobStation.resolve(id: id, using: actorSystem) else {
                    return running.network.stations.map(\.freeBikes)
                }
                bikes.append(try await station.snapshot().freeBikes)
            }
            return bikes
        }
        return try await report(of: job)?.stations.map(\.freeBikes)
    }

    /// Cancels `job` if this node coordinates it (see ``JobService/cancel(job:origin:)``).
    func cancelHere(job: String, origin: JobService.CancelOrigin) async -> JobService.Cancellation? {
        guard let entry = running[job] else { return nil }
        entry.cancelReason.set(origin)
        // A deposed coordinator stores nothing (see TaskJobs.cancelHere): the cancellation
        // goes to whoever leads the job's group.
        guard await replication?.jobCancelled(job, reason: entry.cancelReason.text) ?? true else {
            abandon(job)
            return nil
        }
        entry.work.cancel()
        let coordinator = actorSystem.node.name
        let work = entry.work
        let report = try? await withTimeout(seconds: 10, clock: clock) { try await work.value }
        return JobService.Cancellation(
            coordinator: coordinator, coordinatorAddress: actorSystem.address.description, summary: report.map { JobStore.Summary(report: $0, coordinator: coordinator, finished: Date(timeIntervalSince1970: actorSystem.runtime.unixNow)) },
            storeError: report?.storeError)
    }

    /// Ids of the jobs this node coordinates now.
    func runningJobIDs() -> [String] {
        running.keys.sorted()
    }

    /// Whether this node holds a replica of `job`'s group.
    func holdsReplica(of job: String) async -> Bool {
        await replication?.holdsReplica(of: job) ?? false
    }

    /// The desk's jobs as a ``JobWorkload``: each question asked of the desk on its node.
    private struct Workload: JobWorkload {
        let service: BikeJobService

        func runningSummaries() async throws -> [JobStore.Summary] {
            await service.whenLocal { await $0.runningSummaries() } ?? []
        }

        func runningJobIDs() async -> [String] {
            await service.whenLocal { $0.runningJobIDs() } ?? []
        }

        func cancelHere(job: String, origin: JobService.CancelOrigin) async -> JobService.Cancellation? {
            await service.whenLocal { await $0.cancelHere(job: job, origin: origin) } ?? nil
        }

        func holdsReplica(of job: String) async -> Bool {
            await service.whenLocal { await $0.holdsReplica(of: job) } ?? false
        }
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

/// Who cancelled a job, set once (the first request wins) and read as the job ends.
private final class CancelReason: Sendable {
    private let origin = Mutex<JobService.CancelOrigin?>(nil)
    /// The reason a job taken over was cancelled with, on the node that cancelled it.
    private let committed: String?

    init(text: String? = nil) {
        committed = text
    }

    func set(_ value: JobService.CancelOrigin) {
        origin.withLock { if $0 == nil { $0 = value } }
    }

    var text: String { committed ?? origin.withLock { $0 }?.reason ?? "cancelled" }
}
