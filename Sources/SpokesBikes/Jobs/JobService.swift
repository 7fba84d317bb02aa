import Distributed
import Foundation
import SpokesCluster
import SpokesConcurrency
import Synchronization

/// Every node's well-known job desk (name `jobs`): clients submit bike jobs here, and
/// the node that receives a job coordinates it.
public distributed actor JobService {
    /// The node's runtime clock: what this desk's calls to others are bounded on.
    private nonisolated var clock: any RuntimeClock { actorSystem.runtime.clock }
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
            ("users", job.options.users, BikeLimits.users.integer(in: settings), BikeLimits.users.path),
            ("paths per user", job.options.paths, BikeLimits.paths.integer(in: settings), BikeLimits.paths.path),
            ("stations", job.network.stations.count, BikeLimits.stations.integer(in: settings), BikeLimits.stations.path),
        ]
        for (parameter, value, limit, setting) in checks where value > limit {
            throw .tooLarge(parameter: parameter, value: value, limit: limit, setting: setting)
        }
    }

    /// Who asked a running job to stop.
    public enum CancelOrigin: String, Sendable, Codable {
        /// The client that submitted it (Ctrl-C, or its call cancelled).
        case submitter
        /// `spokes cancel`, from any client.
        case command

        /// How the report says it: `cancelled by the submitter`.
        public var reason: String {
            switch self {
            case .submitter: "cancelled by the submitter"
            case .command: "cancelled with 'spokes cancel'"
            }
        }
    }

    /// What ``cancel(job:origin:)`` did.
    public struct Cancellation: Sendable, Hashable, Codable {
        /// The node that coordinated the job, and where it listens (`host:port`).
        public var coordinator: String
        public var coordinatorAddress: String
        /// The job as it ended; nil when it had not ended within the wait (it is stopping).
        public var summary: JobStore.Summary?
        /// Why its report could not be stored, when it could not.
        public var storeError: String?
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
    private let store: JobStore
    /// The node's desk for jobs of tasks (`spokes map`, `spokes sweep`), whose running
    /// jobs this desk lists and cancels too.
    private let taskJobs: TaskJobs?
    /// Where running bike jobs are replicated (nil: on this node alone).
    private let replication: ReplicatedBikeJobs?
    /// The jobs coordinated here now (until their report is stored).
    private var running: [String: RunningJob] = [:]
    /// Jobs whose replicas are being made, before they run.
    private var starting: Set<String> = []
    /// Runs stopped because the job ended under another node: they store nothing.
    private var abandoned: Set<String> = []
    /// The last reports finished here, newest first, so the dashboard need not read the store.
    private var recentReports: [SimulationReport] = []
    private static let recentReportCount = 10

    /// `store` replaces the job store of the node's data directory (tests make it fail).
    /// `replication` keeps running jobs on other nodes too (nil: on this node alone).
    public init(actorSystem: ClusterSystem, node: ClusterNode, store: JobStore? = nil, replication: ReplicatedBikeJobs? = nil) {
        self.actorSystem = actorSystem
        self.node = node
        self.replication = replication
        let system = actorSystem
        let jobStore = store ?? JobStore(directory: node.settings.dataDirectory, keep: node.settings.jobsKeep, disk: system.runtime.disk, clock: system.runtime.clock) { system.log($0) }
        self.store = jobStore
        taskJobs = node.taskJobs
        // Index the stored history now, in the background, so the first `spokes jobs` need not.
        startBlocking("spokes.job-store") { _ = try? jobStore.summaries() }
    }

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
        // and won it back): finish it rather than run it again.
        if (try? await report(of: job.id)) != nil {
            await replication?.jobFinished(job.id)
            return
        }
        let cancelReason = CancelReason(text: reason)
        let work = start(job, book: book, replica: replica, cancelReason: cancelReason, listener: nil)
        if reason != nil { work.cancel() }
        actorSystem.log("took over job \(job.id): \(book.doneUsers.count) of \(job.options.users) users had ended\(reason.map { "; it was \($0)" } ?? "")")
    }

    /// Whether this node runs `job` now, or is making its replicas.
    func isRunning(_ job: String) -> Bool { running[job] != nil || starting.contains(job) }

    /// Stops running `job` without storing anything: another node owns it now (its
    /// replicas say it finished under another leader).
    func abandon(_ job: String) {
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
        recentReports.insert(report, at: 0)
        recentReports = Array(recentReports.prefix(Self.recentReportCount))
        if let job = report.job {
            running[job] = nil
            await replication?.jobFinished(job)
        }
        return report
    }

    private func forget(_ job: String) {
        running[job] = nil
        abandoned.remove(job)
    }

    /// The jobs of this node: those it coordinates now (state `running`, with their
    /// progress), then those stored under its data directory (at most `jobs.keep`), oldest first.
    public distributed func jobs() async throws -> [JobStore.Summary] {
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
        let tasks = try await (taskJobs?.runningJobs() ?? []).map { job in
            var summary = JobStore.Summary(
                job: job.job, state: job.stalled == nil ? .running : .stalled, finished: nil, coordinator: coordinator, title: job.title, tasks: job.tasks,
                succeeded: job.succeeded, failed: job.failed, cancelled: job.cancelled, retries: job.retries,
                wallTime: job.wallTime, kind: job.kind, stalledReason: job.stalled)
            summary.slots = job.slots
            return summary
        }
        let store = store
        return live + waiting + tasks + (try await runBlocking("spokes.job-store") { try store.summaries() })
    }

    /// Every job of the cluster: this node's (see ``jobs()``) and every alive member's,
    /// asked at once and each within 2 s (a member that does not answer is left out and
    /// named in `unanswered`). A job listed twice (nodes sharing a data directory) is
    /// listed once, running before stored.
    public distributed func clusterJobs() async throws -> ClusterJobs {
        let own = try await jobs()
        let members = node.members.filter { $0.state == .alive || $0.state == .suspect }
        let system = actorSystem
        let answers = await withTaskGroup(of: (String, [JobStore.Summary]?).self) { group in
            for member in members {
                group.addTask {
                    guard let service = try? JobService.resolve(id: ActorID(node: member.node, name: Self.wellKnownName), using: system) else {
                        return (member.node.name, nil)
                    }
                    return (member.node.name, try? await withTimeout(seconds: 2, clock: self.clock) { try await service.jobs() })
                }
            }
            var answers: [(String, [JobStore.Summary]?)] = []
            for await answer in group { answers.append(answer) }
            return answers.sorted { $0.0 < $1.0 }
        }
        var seen = Set(own.map(\.job))
        var all = own
        for (_, jobs) in answers {
            for job in jobs ?? [] where seen.insert(job.job).inserted { all.append(job) }
        }
        var running = all.filter(\.isUnfinished)
        // Each running job's fair share of the cluster's slots: this node's and every
        // alive member's budgets, shared among the running jobs' remaining tasks.
        let budgets = members.filter { $0.state == .alive }.reduce(TaskBudgets(cpu: actorSystem.settings.slots, waiting: actorSystem.settings.waitingSlots)) {
            TaskBudgets(cpu: $0.cpu + $1.slots, waiting: $0.waiting + $1.waitingSlots)
        }
        let shares = JobSlots.shares(of: Dictionary(running.compactMap { job in job.slots.map { (job.job, $0) } }) { first, _ in first }, budgets: budgets)
        for index in running.indices {
            let share = shares[running[index].job]
            running[index].slots?.fairShare = share
        }
        let finished = all.filter { !$0.isUnfinished }.sorted { ($0.finished ?? "") < ($1.finished ?? "") }
        return ClusterJobs(jobs: running + finished, unanswered: answers.filter { $0.1 == nil }.map(\.0))
    }

    /// The cluster's jobs, as ``clusterJobs()`` gathers them.
    public struct ClusterJobs: Sendable, Hashable, Codable {
        /// Running jobs first, then finished ones, oldest first.
        public var jobs: [JobStore.Summary]
        /// Members that did not answer in time.
        public var unanswered: [String]
    }

    /// Where `job` is: the node that coordinates it now or stored it, and where that node
    /// listens; this node first, then every alive member (each within 2 s). Nil when no
    /// node answering knows it.
    public distributed func locate(job: String) async throws -> JobLocation? {
        if let here = try await jobs().first(where: { $0.job == job }) {
            return JobLocation(job: job, node: actorSystem.node.name, address: actorSystem.address.description, summary: here)
        }
        let system = actorSystem
        let members = node.members.filter { $0.state == .alive || $0.state == .suspect }
        return await withTaskGroup(of: JobLocation?.self) { group in
            for member in members {
                group.addTask {
                    guard let service = try? JobService.resolve(id: ActorID(node: member.node, name: Self.wellKnownName), using: system),
                          let listed = try? await withTimeout(seconds: 2, clock: self.clock, operation: { try await service.jobs() }),
                          let summary = listed.first(where: { $0.job == job })
                    else { return nil }
                    return JobLocation(job: job, node: member.node.name, address: member.address, summary: summary)
                }
            }
            for await found in group {
                if let found {
                    group.cancelAll()
                    return found
                }
            }
            return nil
        }
    }

    /// Where a job is (see ``locate(job:)``).
    public struct JobLocation: Sendable, Hashable, Codable {
        public var job: String
        /// The node that coordinates it (running) or stored it (finished).
        public var node: String
        /// Where that node listens, `host:port`.
        public var address: String
        public var summary: JobStore.Summary
    }

    /// The finished jobs stored under this node's data directory, oldest first.
    public distributed func finishedJobs() async throws -> [JobStore.Summary] {
        let store = store
        return try await runBlocking("spokes.job-store") { try store.summaries() }
    }

    /// Whether this node holds a replica of `job`'s group: the job goes on, even where no
    /// member can list it yet (its replicas restarted and have not caught up). A client
    /// following a lost job asks it before it concludes the job is gone.
    public distributed func holdsReplica(of job: String) async -> Bool {
        await replication?.holdsReplica(of: job) ?? false
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
        if let running = running[job]?.job {
            return NetworkAtStart(name: running.network.name, stations: running.network.stations.map(SimulationReport.StationState.init))
        }
        guard let report = try await report(of: job), let stations = report.stationsBefore else { return nil }
        return NetworkAtStart(name: report.network.name, stations: stations)
    }

    /// Bikes at each station of a bike job coordinated here: now while it runs, at its end
    /// once it has finished; nil when this node knows no such job.
    public distributed func stationBikes(of job: String) async throws -> [Int]? {
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

    /// Cancels a running job wherever it runs: here if this node coordinates it, else on
    /// the member that does. Its users stop at their next move, attempts on workers are
    /// cancelled, and its report (which says it was cancelled, and by whom) is stored.
    /// Waits up to 10 s for the job to end; nil when no node runs the job.
    public distributed func cancel(job: String, origin: CancelOrigin) async -> Cancellation? {
        if let cancellation = await cancelHere(job: job, origin: origin) { return cancellation }
        // Every member at once: a silent one does not hold up the answer of the one that runs it.
        let services = node.members.filter { $0.state == .alive || $0.state == .suspect }.compactMap { member in
            try? JobService.resolve(id: ActorID(node: member.node, name: Self.wellKnownName), using: actorSystem)
        }
        return await withTaskGroup(of: Cancellation?.self) { group in
            for service in services {
                group.addTask { try? await service.cancelHere(job: job, origin: origin) }
            }
            for await cancellation in group where cancellation != nil {
                group.cancelAll()
                return cancellation
            }
            return nil
        }
    }

    /// Cancels `job` if this node coordinates it (see ``cancel(job:origin:)``).
    public distributed func cancelHere(job: String, origin: CancelOrigin) async -> Cancellation? {
        guard let entry = running[job] else {
            guard let report = try? await taskJobs?.cancelHere(job: job, reason: origin.reason) else { return nil }
            return Cancellation(
                coordinator: report.coordinator, coordinatorAddress: actorSystem.address.description,
                summary: JobStore.Summary(taskJob: report, finished: Date(timeIntervalSince1970: actorSystem.runtime.unixNow)), storeError: report.storeError)
        }
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
        return Cancellation(
            coordinator: coordinator, coordinatorAddress: actorSystem.address.description, summary: report.map { JobStore.Summary(report: $0, coordinator: coordinator, finished: Date(timeIntervalSince1970: actorSystem.runtime.unixNow)) },
            storeError: report?.storeError)
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
