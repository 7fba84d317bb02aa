import SpokesCluster
import SpokesConcurrency
import SpokesJobs
import SpokesReplication
import SpokesSimulatedCluster

/// Simulated nodes wired as `spokes node` wires its job layer: on each, a Raft host on a
/// simulated disk, replicated jobs, and the job desk (``TaskJobs``) with `workloads`, its
/// group watcher running. For tests of jobs that outlive their coordinator, in virtual
/// time, inside a `.simulated` suite or test (elsewhere it throws ``OutsideSimulation``).
public final class JobDeskCluster: Sendable {
    public let cluster: SimulatedCluster
    public let hosts: [RaftHost]
    public let desks: [TaskJobs]
    /// Each node's stored reports.
    public let histories: [InMemoryTaskJobHistory]
    private let watchers: [Task<Void, Never>]

    /// `machines`: the hosts' machines for other kinds of groups too; `configure`: node
    /// `index`'s settings (a node that speaks only protocols below 7 makes the others keep
    /// their jobs in the formats of the release before, as in a rolling upgrade).
    public init(
        _ count: Int = 3, kinds: [any TaskKind], workloads: JobWorkloads = JobWorkloads(),
        machines: [String: @Sendable () -> any ReplicatedStateMachine] = [:],
        configure: (Int, inout ClusterSettings) -> Void = { _, _ in }
    ) async throws {
        cluster = try SimulatedCluster(count, configure: configure, registry: { _ in TaskRegistry(kinds: kinds) }, disk: { _ in SimulatedDisk() })
        try await cluster.awaitMesh()
        var hosts: [RaftHost] = []
        var desks: [TaskJobs] = []
        var histories: [InMemoryTaskJobHistory] = []
        var watchers: [Task<Void, Never>] = []
        for node in cluster.nodes {
            let host = RaftHost(system: node.system, settings: RaftHostSettings(dataDirectory: "/data/\(node.system.node.name)/raft"),
                                machines: ReplicatedTaskJobs.machines(workloads: workloads).merging(machines) { first, _ in first })
            let members: @Sendable () -> [Member] = { [weak node] in node?.members ?? [] }
            let replicated = ReplicatedTaskJobs(
                host: host, system: node.system, members: members, fallback: nil, workloads: workloads,
                usesJobGroups: { [weak node] in node?.mayUse(protocolVersion: ProtocolVersions.oneJobLayer) ?? false })
            let history = InMemoryTaskJobHistory()
            let desk = TaskJobs.host(on: node, history: history, durability: replicated, workloads: workloads)
            watchers.append(replicated.watch(desk))
            hosts.append(host)
            desks.append(desk)
            histories.append(history)
        }
        self.hosts = hosts
        self.desks = desks
        self.histories = histories
        self.watchers = watchers
    }

    /// The group state of `job`, a workload's job, on node `index` (nil once removed).
    public func machine(of job: String, on index: Int) async -> JobMachine? {
        await hosts[index].stateMachine(of: ReplicatedTaskJobs.group(of: job)) as? JobMachine
    }

    /// The node other than `excluded` that stored `job`'s report, and the report.
    public func storedReport(of job: String, excluding excluded: Int? = nil) -> (node: Int, report: TaskJobReport)? {
        for (index, history) in histories.enumerated() where index != excluded {
            if let report = try? history.taskJobReport(of: job) { return (index, report) }
        }
        return nil
    }

    /// Pauses node `index`, `job`'s coordinator, and waits (at most `seconds` of virtual
    /// time) for another node to take the job over and store its report: that node, and
    /// the report.
    public func pauseForTakeOver(_ index: Int, of job: String, within seconds: Double = 60) async throws -> (node: Int, report: TaskJobReport) {
        cluster.pause(index)
        try await cluster.run(until: "another node stores the job's report", within: seconds) { self.storedReport(of: job, excluding: index) != nil }
        guard let stored = storedReport(of: job, excluding: index) else { throw VirtualTimeout(what: "the report of \(job)", seconds: cluster.clock.now) }
        return stored
    }

    /// Resumes paused node `index`, a coordinator replaced while it was paused, and waits
    /// for its run of `job` (the `submitted` call) to end: the report it told its
    /// submitter, if any (one that lost the job must tell none), and whether it stored one
    /// (it must not).
    public func resumeDeposed(_ index: Int, run submitted: Task<TaskJobReport, any Error>, of job: String) async throws -> (told: TaskJobReport?, stored: Bool) {
        cluster.resume(index)
        let told = try await cluster.complete("the old coordinator's run", within: 60) { () async -> TaskJobReport? in try? await submitted.value }
        return (told, (try? histories[index].taskJobReport(of: job)) != nil)
    }

    /// Stops the watchers and the hosts (while virtual time still moves: a host's stop
    /// waits for its disk), then the cluster.
    public func stop() async {
        for watcher in watchers { watcher.cancel() }
        let hosts = hosts
        _ = try? await cluster.complete("the hosts stop", within: 30) { for host in hosts { await host.stop() } }
        cluster.stop()
    }
}
