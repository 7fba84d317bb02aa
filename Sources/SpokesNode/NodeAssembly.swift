import FoundationEssentials
import Glibc
import SpokesBikes
import SpokesCluster
import SpokesConcurrency
import SpokesJobs
import SpokesReplication

/// A node's job machinery, wired once: what `spokes node` runs and what the simulator's
/// `--model nodes` runs, so the code the simulator checks is the code that ships.
///
/// Given a built ``ClusterNode`` and the node's own folder, ``start(node:folder:)`` makes
/// the job store (bike jobs and jobs of tasks in one file, in the node's data directory),
/// the journal of running jobs of tasks (in `folder`), the Raft host (groups in
/// `folder/raft`) with the state machines of task jobs and bike jobs, the replicated
/// task jobs (the journal is their fallback without enough members) and bike jobs, starts
/// the node with them, reopens its stored groups, and hosts the `bikejobs` desk
/// (``BikeJobService``) and the `jobs` desk (``JobService``), which lists and cancels
/// every job; then the watchers that take a job over and replace a dead replica.
/// Every file goes through the node's runtime's disk (``Runtime/disk``). ``stop(sayingGoodbye:)``
/// stops them all in the order that loses nothing.
///
/// What stays with the caller: flags, the keyring, the claim on `folder` (one process per
/// node's files), the dashboard and printing (`spokes node`); virtual time and faults (the
/// simulator).
public final class NodeAssembly: Sendable {
    public let node: ClusterNode
    /// Finished jobs of both kinds: `spokes jobs`, `spokes result`.
    public let store: JobStore
    /// Running jobs of tasks on this node's disk, when they are not replicated.
    public let journal: TaskJobJournal
    /// Every Raft group with a replica here.
    public let raft: RaftHost
    public let replicatedTaskJobs: ReplicatedTaskJobs
    /// The node's `task-jobs` desk: every job it coordinates (maps, sweeps, bike jobs).
    public let taskJobs: TaskJobs
    /// The node's `jobs` desk: the list of every job, where a job is, cancel.
    public let jobs: JobService
    /// The node's `bikejobs` desk: bike jobs submitted, their reports and stations.
    public let bikeJobs: BikeJobService
    /// Take-overs and replica changes of the jobs held here.
    private let watchers: [Task<Void, Never>]

    private init(
        node: ClusterNode, store: JobStore, journal: TaskJobJournal, raft: RaftHost, replicatedTaskJobs: ReplicatedTaskJobs, taskJobs: TaskJobs,
        jobs: JobService, bikeJobs: BikeJobService, watchers: [Task<Void, Never>]
    ) {
        self.node = node
        self.store = store
        self.journal = journal
        self.raft = raft
        self.replicatedTaskJobs = replicatedTaskJobs
        self.taskJobs = taskJobs
        self.jobs = jobs
        self.bikeJobs = bikeJobs
        self.watchers = watchers
    }

    /// Wires `node`'s job machinery over `folder` (the node's own files) and starts the
    /// node (``ClusterNode/start()``, then ``TaskJobs/host(on:history:durability:journal:)``): jobs its journal
    /// or its Raft groups hold from before run on from there. Problems reopening a stored
    /// group are logged, not thrown: the node still serves the others.
    public static func start(node: ClusterNode, folder: String) async -> NodeAssembly {
        let log = node.system
        let disk = node.system.runtime.disk
        let store = JobStore(of: node)
        let journal = TaskJobJournal(dataDirectory: folder, disk: disk) { log.log($0) }
        // A job's running state: replicated on `jobs.replicas` minus one other members, or,
        // without enough members, on this node's disk (maps and sweeps in its journal,
        // bike jobs in a group of this node alone).
        // The workloads whose jobs the job desk runs: the bike simulation (Docs/one-job-layer.md).
        let bikeRuns = LiveBikeRuns()
        var workloads = JobWorkloads()
        workloads.register(BikeWorkload.name, BikeWorkload.workload(live: bikeRuns))
        let raft = RaftHost(
            system: node.system,
            settings: RaftHostSettings(dataDirectory: DiskPath.join(folder, "raft")),
            machines: ReplicatedTaskJobs.machines(workloads: workloads),
            commitLatency: node.raftCommitLatency)
        node.setReplicaGroups { await raft.groupViews() }
        // In the membership's order, unsorted: the job groups read them every quarter
        // second and need no order (``JobGroups/init(host:system:members:)``).
        let members: @Sendable () -> [Member] = { [weak node] in node?.membersInAnyOrder ?? [] }
        let usesJobGroups: @Sendable () -> Bool = { [weak node] in node?.mayUse(protocolVersion: ProtocolVersions.oneJobLayer) ?? false }
        let replicated = ReplicatedTaskJobs(
            host: raft, system: node.system, members: members, fallback: journal, workloads: workloads, usesJobGroups: usesJobGroups)
        node.start()
        let taskJobs = TaskJobs.host(on: node, history: store, durability: replicated, journal: journal, workloads: workloads)
        for (group, problem) in await raft.reopenStoredGroups() { log.log("cannot reopen raft group \(group): \(problem)") }
        let watchers = [replicated.watch(taskJobs)]
        let (jobs, bikeJobs) = await BikeJobService.hostDesks(on: node, store: store, live: bikeRuns)
        return NodeAssembly(
            node: node, store: store, journal: journal, raft: raft, replicatedTaskJobs: replicated, taskJobs: taskJobs,
            jobs: jobs, bikeJobs: bikeJobs, watchers: watchers)
    }

    /// Stops the watchers, then the Raft groups, then the node: with `sayingGoodbye`, it
    /// tells its peers it leaves and waits (at most a second) for that to go out; without,
    /// it only closes its connections (what the simulator's crash does, behind a cut).
    public func stop(sayingGoodbye: Bool = true) async {
        for watcher in watchers { watcher.cancel() }
        await raft.stop()
        if sayingGoodbye {
            await node.stop()
        } else {
            let closeConnections: () -> Void = node.stop  // the variant that does not wait
            closeConnections()
        }
    }
}
