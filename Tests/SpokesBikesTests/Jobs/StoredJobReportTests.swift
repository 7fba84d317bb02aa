import FoundationEssentials
import SpokesCluster
import SpokesConcurrency
import SpokesClusterTestKit
import SpokesJobs
import SpokesTestKit
import Testing
@testable import SpokesBikes

/// What `spokes result` finds on a node (``StoredJobReport/find(_:on:using:)``), on a
/// simulated node in virtual time.
@Suite(.simulated, .hangGuard)
struct StoredJobReportTests {
    /// A bike job the one job desk ran is stored as a job of tasks carrying the bike
    /// report. Found there (it was stored after the bike desk was asked, as a whole-node
    /// simulation in CI saw: the client printed "6 of 6 tasks succeeded"), it is the bike
    /// report, saying it is stored.
    @Test func aBikeJobStoredAmongTheJobsOfTasksIsFoundAsABikeReport() async throws {
        let history = InMemoryTaskJobHistory()
        let cluster = try SimulatedCluster(1, configure: { _, settings in settings.dataDirectory = "/data/n0" }, registry: { _ in TaskRegistry(kinds: BikeKinds.all) },
                                           disk: { _ in SimulatedDisk() })
        defer { cluster.stop() }
        let node = cluster[0]
        // The job desk runs bikes and stores in `history`; the bike desk reads a store of its own.
        var workloads = JobWorkloads()
        workloads.register(BikeWorkload.name, BikeWorkload.workload())
        TaskJobs.host(on: node, history: history, workloads: workloads)
        let desks = await BikeJobService.hostDesks(on: node)
        defer { withExtendedLifetime(desks) {} }
        let job = BikeJob(id: "job-found", network: Network.synthetic(stations: 2, bikes: 2, emptySlots: 2), options: SimulationOptions(users: 2, paths: 1, seed: 1))
        let bike = job.report(from: job.startingBook, wallTime: 1, cancelReason: nil, finished: Date(timeIntervalSince1970: 0))
        let spec = try job.taskJobSpec(settings: node.settings)
        var stored = TaskJobReport(
            job: job.id, kind: spec.kind, schema: nil, title: spec.title, coordinator: "n0", inputs: spec.inputs,
            tasks: spec.inputs.indices.map { _ in TaskJobReport.TaskEnd(JobRunner.Outcome(task: 0, output: "", node: "n0", attempts: 1, failures: [])) },
            wallTime: 1, cancelReason: nil)
        stored.workloadReport = String(decoding: try JSONEncoder().encode(bike), as: UTF8.self)
        try history.append(stored)

        let client = try cluster.client()
        _ = try await cluster.complete("the client joins", within: 10) { try await client.join(node.system.address) }
        let found = try await cluster.complete("the lookup", within: 10) { try await StoredJobReport.find(job.id, on: node.system.node, using: client) }
        guard case .bikes(let report)? = found else {
            Issue.record("want the bike report, found \(String(describing: found))")
            return
        }
        #expect(report.job == job.id && report.users == 2 && report.stored == true)
    }
}
