import Glibc
import SpokesCluster
import SpokesClusterTestKit
import SpokesConcurrency
import SpokesReplication
import SpokesTestKit
import Synchronization
import Testing
@testable import SpokesJobs

/// A history that refuses every report while ``refusing`` (a full disk), and counts the
/// tries.
private final class RefusingHistory: TaskJobHistory {
    let kept = InMemoryTaskJobHistory()
    private let state = Mutex((refusing: true, tries: 0))

    var refusing: Bool {
        get { state.withLock { $0.refusing } }
        set { state.withLock { $0.refusing = newValue } }
    }
    var tries: Int { state.withLock { $0.tries } }

    func append(_ report: TaskJobReport) throws {
        let refuses = state.withLock { state in
            state.tries += 1
            return state.refusing
        }
        if refuses { throw DiskError("write", "/data/jobs.jsonl", code: ENOSPC) }
        try kept.append(report)
    }

    func taskJobReport(of job: String) throws -> TaskJobReport? { try kept.taskJobReport(of: job) }
}

/// A replicated job of tasks whose coordinator cannot store its report (a full disk), on
/// three nodes wired as `spokes node` wires them, in virtual time.
@Suite(.simulated, .hangGuard)
struct TaskJobFullStoreTests {
    /// Its coordinator keeps the report and tries again, 1 s, then twice as long each time
    /// up to 30 s, rather than have the watcher run the job again every 0.25 s; once the
    /// disk has room, the report is stored and the job finished in its replicas.
    @Test func aReportTheDiskRefusedIsTriedAgainWithBackOffNotRunAgain() async throws {
        let cluster = try SimulatedCluster(3, registry: { _ in TaskRegistry(kinds: [CubeTask()]) }, disk: { _ in SimulatedDisk() })
        defer { cluster.stop() }
        try await cluster.awaitMesh()
        let history = RefusingHistory()
        var watchers: [Task<Void, Never>] = []
        var hosts: [RaftHost] = []
        var desks: [TaskJobs] = []
        for (index, node) in cluster.nodes.enumerated() {
            let host = RaftHost(system: node.system, settings: RaftHostSettings(dataDirectory: "/data/\(node.system.node.name)/raft"),
                                machines: ReplicatedTaskJobs.machines)
            let members: @Sendable () -> [Member] = { [weak node] in node?.members ?? [] }
            let replicated = ReplicatedTaskJobs(host: host, system: node.system, members: members, fallback: nil)
            let desk = TaskJobs.host(on: node, history: index == 0 ? history : InMemoryTaskJobHistory(), durability: replicated)
            watchers.append(replicated.watch(desk))
            hosts.append(host)
            desks.append(desk)
        }
        defer { for watcher in watchers { watcher.cancel() } }
        let spec = TaskJobSpec(id: "map-full", kind: CubeTask.name, schema: nil, title: "2 x cube", inputs: ["{\"number\":2}", "{\"number\":3}"],
                               deadline: TaskDeadlines.unreached, retries: 0)
        let coordinator = desks[0]
        let told = try await cluster.complete("the job runs", within: 30) { try await coordinator.submit(spec, listener: nil) }
        #expect(told.stored == false && told.storeError?.contains("No space left on device") == true, "its client hears the report was not stored, and why: \(told.storeError ?? "-")")
        #expect(history.tries == 1)

        try await cluster.run(for: 20)
        // Tries at 1, 3, 7 and 15 s after the first: four more. Run again every 0.25 s, it was eighty.
        #expect(history.tries == 5, "tried again with back-off, not run again: \(history.tries) tries")
        #expect(try history.taskJobReport(of: spec.id) == nil)

        history.refusing = false
        try await cluster.run(until: "the report is stored", within: 31) { (try? history.taskJobReport(of: spec.id)) != nil }
        let stored = try #require(try history.taskJobReport(of: spec.id))
        #expect(stored.tasks.count == 2 && stored.stored == true)
        try await cluster.run(until: "the job is finished in its replicas (its group removed)", within: 30) {
            await hosts[0].status(of: ReplicatedTaskJobs.group(of: spec.id)) == nil
        }
        for host in hosts { await host.stop() }
    }
}
