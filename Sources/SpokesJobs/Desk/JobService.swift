import Distributed
import FoundationEssentials
import SpokesCluster
import SpokesConcurrency

/// Every node's well-known job desk (name `jobs`), whatever the jobs run: it lists the
/// node's and the cluster's jobs (running, held and stored), finds where a job is, and
/// cancels a job wherever it runs. Jobs of tasks are submitted to ``TaskJobs`` (name
/// `task-jobs`); a workload with jobs of its own (the bike simulation) keeps a desk for
/// submitting them and adds itself here as a ``JobWorkload``.
public distributed actor JobService {
    /// The node's runtime clock: what this desk's calls to others are bounded on.
    private nonisolated var clock: any RuntimeClock { actorSystem.runtime.clock }
    public typealias ActorSystem = ClusterSystem

    public static let wellKnownName = "jobs"

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

        public init(coordinator: String, coordinatorAddress: String, summary: JobStore.Summary?, storeError: String?) {
            self.coordinator = coordinator
            self.coordinatorAddress = coordinatorAddress
            self.summary = summary
            self.storeError = storeError
        }
    }

    private let node: ClusterNode
    /// The node's store of finished jobs.
    private let store: JobStore
    /// What runs here besides the store's finished jobs: the workloads given, then the
    /// node's jobs of tasks.
    private let workloads: [any JobWorkload]

    /// `store` replaces the job store of the node's data directory (tests make it fail).
    /// `workloads` are listed and cancelled beside the node's jobs of tasks (its
    /// ``TaskJobs/hosted(on:)``, when hosted before this desk).
    public init(actorSystem: ClusterSystem, node: ClusterNode, store: JobStore? = nil, workloads: [any JobWorkload] = []) {
        self.actorSystem = actorSystem
        self.node = node
        let system = actorSystem
        let jobStore = store ?? JobStore(of: node)
        self.store = jobStore
        self.workloads = workloads + (TaskJobs.hosted(on: node).map { [TaskJobsWorkload(desk: $0, system: system)] } ?? [])
        // Index the stored history now, in the background, so the first `spokes jobs` need not.
        startBlocking("spokes.job-store") { _ = try? jobStore.summaries() }
    }

    /// The jobs of this node: those it runs or holds now (state `running` or `stalled`,
    /// with their progress), then those stored under its data directory (at most
    /// `jobs.keep`), oldest first.
    public distributed func jobs() async throws -> [JobStore.Summary] {
        var live: [JobStore.Summary] = []
        for workload in workloads { live += try await workload.runningSummaries() }
        let store = store
        return live + (try await runBlocking("spokes.job-store") { try store.summaries() })
    }

    /// Every job of the cluster: this node's (see ``jobs()``) and every alive member's,
    /// asked at once and each within 2 s (a member that does not answer is left out and
    /// named in `unanswered`). A job listed twice is listed once, and as stored when one
    /// listing is its stored report: a report is stored only once the job's end is
    /// committed, so a running listing beside it lags (a replica that has not applied the
    /// end yet, as CI's replica replacement saw right after its jobs ended; a node whose
    /// look at its running jobs came before the end, `simulate-cluster --nodes 5`, seed 174).
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
        // This node's own list too: a job that ends between the node's two looks (its
        // running jobs, then its store) is in both (`simulate-cluster --model nodes`, seed
        // 174: `spokes jobs` listed a map twice as it ended).
        var place: [String: Int] = [:]
        var all: [JobStore.Summary] = []
        for job in own + answers.flatMap({ $0.1 ?? [] }) {
            guard let index = place[job.job] else {
                place[job.job] = all.count
                all.append(job)
                continue
            }
            if all[index].isUnfinished, !job.isUnfinished { all[index] = job }
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
    /// listens; this node first, then every alive member (each within 2 s). A member that
    /// runs it is answered at once; else one that lists it ended, another member's before
    /// this node's (a coordinator that lost its replicas lists the job's end while another
    /// member takes it over or stores it); else one that lists it stalled (a replica cut
    /// off from the rest). Nil when no node answering knows it.
    public distributed func locate(job: String) async throws -> JobLocation? {
        let listedHere = try await jobs().first(where: { $0.job == job })
        let here = listedHere.map { JobLocation(job: job, node: actorSystem.node.name, address: actorSystem.address.description, summary: $0) }
        if let here, here.summary.state == .running { return here }
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
            var ended: JobLocation?
            var stalled: JobLocation?
            for await found in group {
                guard let found else { continue }
                switch found.summary.state {
                case .running:
                    group.cancelAll()
                    return found
                case .stalled: stalled = stalled ?? found
                default: ended = ended ?? found
                }
            }
            let endedHere = here.flatMap { $0.summary.isUnfinished ? nil : $0 }
            return ended ?? endedHere ?? here ?? stalled
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
        for workload in workloads where await workload.holdsReplica(of: job) { return true }
        return false
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
        for workload in workloads {
            if let cancellation = await workload.cancelHere(job: job, origin: origin) { return cancellation }
        }
        return nil
    }

    /// Ids of the jobs this node coordinates now.
    public distributed func runningJobs() async -> [String] {
        var ids: [String] = []
        for workload in workloads { ids += await workload.runningJobIDs() }
        return ids.sorted()
    }
}
