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
    /// `index`'s settings.
    public init(
        _ count: Int = 3, kinds: [any TaskKind], workloads: JobWorkloads, machines: [String: @Sendable () -> any ReplicatedStateMachine] = [:],
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
            let replicated = ReplicatedTaskJobs(host: host, system: node.system, members: members, fallback: nil, workloads: workloads)
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
        await hosts[index].stateMachine(of: ReplicatedTaskJobs.workloadGroup(of: job)) as? JobMachine
    }

    /// The node other than `excluded` that stored `job`'s report, and the report.
    public func storedReport(of job: String, excluding excluded: Int? = nil) -> (node: Int, report: TaskJobReport)? {
        for (index, history) in histories.enumerated() where index != excluded {
            if let report = try? history.taskJobReport(of: job) { return (index, report) }
        }
        return nil
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
