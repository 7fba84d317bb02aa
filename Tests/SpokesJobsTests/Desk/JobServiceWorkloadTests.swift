import Foundation
import SpokesCluster
import SpokesClusterTestKit
import SpokesConcurrency
import SpokesTestKit
import Synchronization
import Testing
@testable import SpokesJobs

/// The node's job desk with a workload it knows nothing of: it lists that workload's
/// running jobs beside the stored ones, finds and cancels them on the member that runs
/// them, and answers for its replicas. On the simulated network, in virtual time.
@Suite(.simulated, .hangGuard)
struct JobServiceWorkloadTests {
    /// A workload of made-up jobs: `running` ones it coordinates, `held` ones it holds
    /// replicas of; a cancelled job stops running and is remembered.
    final class MadeUpWorkload: JobWorkload {
        let node: String
        /// `ended`: jobs listed as failed here with no report (a coordinator that lost them).
        let state: Mutex<(running: [String], held: Set<String>, cancelled: [String], ended: [String])>

        init(node: String, running: [String] = [], held: Set<String> = []) {
            self.node = node
            state = Mutex((running, held, [], []))
        }

        func runningSummaries() async throws -> [JobStore.Summary] {
            let (running, ended) = state.withLock { ($0.running, $0.ended) }
            return running.map { job in
                JobStore.Summary(job: job, state: .running, finished: nil, coordinator: node, title: "made up", tasks: 3,
                                 succeeded: 1, failed: 0, cancelled: 0, retries: 0, wallTime: 1)
            } + ended.map { job in
                JobStore.Summary(job: job, state: .failed, finished: nil, coordinator: node, title: "made up", tasks: 3,
                                 succeeded: 1, failed: 2, cancelled: 0, retries: 0, wallTime: 1)
            }
        }

        func runningJobIDs() async -> [String] { state.withLock { $0.running } }

        func cancelHere(job: String, origin: JobService.CancelOrigin) async -> JobService.Cancellation? {
            let found = state.withLock { state -> Bool in
                guard let index = state.running.firstIndex(of: job) else { return false }
                state.running.remove(at: index)
                state.cancelled.append(job)
                return true
            }
            guard found else { return nil }
            return JobService.Cancellation(coordinator: node, coordinatorAddress: "", summary: nil, storeError: nil)
        }

        func holdsReplica(of job: String) async -> Bool { state.withLock { $0.held.contains(job) } }
    }

    @Test func aWorkloadsJobsAreListedFoundAndCancelledOnTheMemberThatRunsThem() async throws {
        let cluster = try SimulatedCluster(2, configure: { index, settings in settings.dataDirectory = "/data/n\(index)" },
                                           disk: { _ in SimulatedDisk() })
        defer { cluster.stop() }
        try await cluster.awaitMesh()
        let workloads = [MadeUpWorkload(node: "n0"), MadeUpWorkload(node: "n1", running: ["w-1"], held: ["w-held"])]
        let desks = (0..<2).map { index in
            ClusterSystem.withWellKnownName(JobService.wellKnownName) {
                JobService(actorSystem: cluster[index].system, node: cluster[index], workloads: [workloads[index]])
            }
        }
        defer { withExtendedLifetime(desks) {} }
        let client = try cluster.client()
        try await cluster.complete("the client joins", within: 10) { try await client.join(cluster[0].system.address) }
        let asked = try JobService.resolve(id: ActorID(node: cluster[0].system.node, name: JobService.wellKnownName), using: client)
        try await cluster.complete("the questions", within: 30) {
            #expect(try await asked.jobs().isEmpty, "n0 runs nothing and stored nothing")
            #expect(try await asked.clusterJobs().jobs.map(\.job) == ["w-1"])
            let located = try await asked.locate(job: "w-1")
            #expect(located?.node == "n1" && located?.summary.state == .running)
            #expect(try await asked.holdsReplica(of: "w-held") == false, "n0 holds no replica")
            #expect(try await asked.cancelHere(job: "w-1", origin: .command) == nil, "n0 does not run it")
            let cancellation = try await asked.cancel(job: "w-1", origin: .command)
            #expect(cancellation?.coordinator == "n1", "cancelled where it runs")
            let cancelled = workloads[1].state.withLock { $0.cancelled }
            #expect(cancelled == ["w-1"])
            let again = try await asked.cancel(job: "w-1", origin: .command)
            #expect(again == nil, "a cancelled job runs nowhere")
            #expect(try await asked.clusterJobs().jobs.isEmpty)
        }
        try await cluster.complete("the client joins n1", within: 10) { try await client.join(cluster[1].system.address) }
        let other = try JobService.resolve(id: ActorID(node: cluster[1].system.node, name: JobService.wellKnownName), using: client)
        try await cluster.complete("n1's replica", within: 10) {
            let holds = try await other.holdsReplica(of: "w-held")
            let running = try await other.runningJobs()
            #expect(holds && running.isEmpty, "n1 holds its replica and runs nothing now")
        }
    }

    /// Found by the nodes model's `jobs` client (`simulate-cluster --model nodes --nodes
    /// 5`, seed 174): a job that ended between the node's look at its running jobs and at
    /// its store was listed twice. Listed once, as stored: its report is its end (CI's
    /// replica replacement saw a lagging replica list a stored job as running).
    @Test func aJobRunningAndStoredOnOneNodeIsListedOnceAsStored() async throws {
        let cluster = try SimulatedCluster(1, configure: { _, settings in settings.dataDirectory = "/data/n0" }, disk: { _ in SimulatedDisk() })
        defer { cluster.stop() }
        try await cluster.awaitMesh()
        let store = JobStore(of: cluster[0])
        let stored = JobStore.Summary(job: "w-1", state: .completed, finished: "2026-11-27T00:00:00Z", coordinator: "n0", title: "made up", tasks: 3,
                                      succeeded: 3, failed: 0, cancelled: 0, retries: 0, wallTime: 1)
        try store.append(summary: stored, key: "madeUp", report: Data("{}".utf8))
        let desk = ClusterSystem.withWellKnownName(JobService.wellKnownName) {
            JobService(actorSystem: cluster[0].system, node: cluster[0], store: store, workloads: [MadeUpWorkload(node: "n0", running: ["w-1"])])
        }
        defer { withExtendedLifetime(desk) {} }
        let client = try cluster.client()
        try await cluster.complete("the client joins", within: 10) { try await client.join(cluster[0].system.address) }
        let asked = try JobService.resolve(id: ActorID(node: cluster[0].system.node, name: JobService.wellKnownName), using: client)
        let listed = try await cluster.complete("jobs", within: 10) { try await asked.clusterJobs() }
        #expect(listed.jobs.map(\.job) == ["w-1"] && listed.jobs.first?.state == .completed, "once, as its stored end")
    }
}
