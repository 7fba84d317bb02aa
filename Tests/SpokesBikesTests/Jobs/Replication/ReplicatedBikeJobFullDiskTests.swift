import Foundation
import Glibc
import SpokesCluster
import SpokesClusterTestKit
import SpokesConcurrency
import SpokesJobs
import SpokesReplication
import SpokesTestKit
import Synchronization
import Testing
@testable import SpokesBikes

/// A ``SimulatedDisk`` whose job store is full while ``refusing``: appends to the store's
/// file fail with `ENOSPC` (the Raft log and the rest still write), so the job runs to its
/// end and only its report cannot be stored.
private final class FullStoreDisk: Disk {
    let disk = SimulatedDisk()
    private let refusal = Atomic<Bool>(true)

    var refusing: Bool {
        get { refusal.load(ordering: .acquiring) }
        set { refusal.store(newValue, ordering: .releasing) }
    }

    func read(_ path: String) throws(DiskError) -> [UInt8]? { try disk.read(path) }
    func read(_ path: String, at offset: Int, count: Int) throws(DiskError) -> [UInt8] { try disk.read(path, at: offset, count: count) }
    func status(of path: String) throws(DiskError) -> DiskFileStatus? { try disk.status(of: path) }
    func append(_ bytes: [UInt8], to path: String) throws(DiskError) {
        if refusing, path.hasSuffix("jobs.jsonl") { throw DiskError("write", path, code: ENOSPC) }
        try disk.append(bytes, to: path)
    }
    func sync(_ path: String) throws(DiskError) { try disk.sync(path) }
    func truncate(_ path: String, to length: Int) throws(DiskError) { try disk.truncate(path, to: length) }
    func replace(_ path: String, with bytes: [UInt8], mode: UInt32) throws(DiskError) { try disk.replace(path, with: bytes, mode: mode) }
    func rename(_ path: String, to newPath: String) throws(DiskError) { try disk.rename(path, to: newPath) }
    func withLock<T>(_ path: String, exclusive: Bool, _ body: () throws -> T) throws -> T { try disk.withLock(path, exclusive: exclusive, body) }
    func remove(_ path: String) throws(DiskError) { try disk.remove(path) }
    func removeTree(_ path: String) throws(DiskError) { try disk.removeTree(path) }
    func makeDirectory(_ path: String) throws(DiskError) { try disk.makeDirectory(path) }
    func syncDirectory(_ path: String) throws(DiskError) { try disk.syncDirectory(path) }
    func contents(ofDirectory path: String) throws(DiskError) -> [String]? { try disk.contents(ofDirectory: path) }
}

/// A replicated bike job whose report cannot be stored (a full disk) on one node wired as
/// `spokes node` wires it (Raft host, replicated jobs, the job desk and its watcher), in
/// virtual time.
@Suite(.simulated, .hangGuard)
struct ReplicatedBikeJobFullDiskTests {
    /// Found as seed 23 of `simulate-cluster --model nodes` with only full-disk faults: the
    /// coordinator told its client the report (saying it was not stored) and committed the
    /// job finished anyway, so its group was removed and no node ever stored or listed the
    /// job. Now the job stays unfinished in its replicas until its report is stored.
    @Test func aReportThatCouldNotBeStoredIsStoredOnceTheDiskHasRoom() async throws {
        let disk = FullStoreDisk()
        let cluster = try SimulatedCluster(
            1, startsNodes: false, configure: { _, settings in settings.dataDirectory = "/data/n0" },
            registry: { _ in TaskRegistry(kinds: BikeKinds.all) }, disk: { _ in disk })
        defer { cluster.stop() }
        let node = cluster[0]
        var workloads = JobWorkloads()
        workloads.register(BikeWorkload.name, BikeWorkload.workload())
        let raft = RaftHost(
            system: node.system, settings: RaftHostSettings(dataDirectory: "/data/n0/raft"), machines: ReplicatedTaskJobs.machines(workloads: workloads))
        let replication = ReplicatedTaskJobs(
            host: raft, system: node.system, members: { [weak node] in node?.members ?? [] }, fallback: nil, workloads: workloads)
        node.start()
        let store = JobStore(of: node)
        let desk = TaskJobs.host(on: node, history: store, durability: replication, workloads: workloads)
        let (jobs, bikes) = await BikeJobService.hostDesks(on: node, store: store)
        let watcher = replication.watch(desk)
        defer { watcher.cancel() }

        let options = SimulationOptions(users: 4, paths: 2, seed: 1, timing: MoveTiming(moveTime: 0.1, timeScale: 1))
        let job = BikeJob(id: "job-full-store", network: try BikeJobTests.contendedNetwork(), options: options)
        let told = try await cluster.complete("the job runs", within: 60) { try await bikes.submit(job, listener: nil) }
        #expect(told.completedUsers == 4)
        #expect(told.stored == false && told.storeError?.contains("no space left on device") == true, "its client hears the report was not stored, and why")
        // While the disk is full, the job stays held (not finished) in its group, and is
        // not run again: its coordinator tries to store the report it has.
        func epoch() async -> Int? { (await raft.stateMachine(of: ReplicatedTaskJobs.group(of: job.id)) as? JobMachine)?.epoch }
        let epochWhenTold = await epoch()
        try await cluster.run(for: 20)
        #expect(try await jobs.finishedJobs().isEmpty)
        #expect(await replication.heldUnfinished().map(\.spec.id) == [job.id], "the job is not finished while its report is not stored")
        #expect(await epoch() == epochWhenTold, "not run again every watch (a new epoch each time) while the disk is full")

        disk.refusing = false
        try await cluster.run(until: "the report is stored", within: 30) { try await jobs.finishedJobs().map(\.job) == [job.id] }
        let stored = try #require(try await bikes.report(of: job.id))
        #expect(stored.completedUsers == 4 && stored.results.map(\.user) == Array(0..<4), "each user once")
        #expect(stored.conservation.holds)
        await raft.stop()
    }
}
