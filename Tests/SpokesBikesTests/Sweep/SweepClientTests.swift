import Foundation
import SpokesCluster
import SpokesClusterTestKit
import SpokesConcurrency
import SpokesJobs
import SpokesTestKit
import Testing
@testable import SpokesBikes

/// A sweep's client (`spokes sweep`, the simulator's whole nodes): a plan run as one job
/// of `bikes.sweep-run` tasks on nodes of a simulated network, and its report rebuilt
/// from the stored job.
@Suite(.simulated, .hangGuard)
struct SweepClientTests {
    @Test func aSweepRunsEachRunOnceAsATaskAndItsReportGroupsThem() async throws {
        let cluster = try SimulatedCluster(2, configure: { $1.slots = 2 }, registry: { _ in TaskRegistry(kinds: BikeKinds.all) })
        defer { cluster.stop() }
        try await cluster.awaitMesh()
        let client = try await cluster.clusterClient(to: cluster[0], registry: TaskRegistry(kinds: BikeKinds.all))
        let plan = try SweepPlan(network: .synthetic(stations: 4, bikes: 6, emptySlots: 4), lists: [.users: "3,5", .paths: "2", .seed: "1-2"])
        let started = Promise<ClusterClient.Plan, Never>()
        let job = try await cluster.complete("the sweep", within: 60) {
            try await SweepClient.run(plan, with: client, deadline: 30, retries: 1, onStart: { started.resolve($0) })
        }
        #expect(job.job.hasPrefix("sweep-") && job.kind == SweepRunTask.name && job.title == "sweep \(plan.network.name): 4 runs")
        #expect(try #require(started.future.currentResult).get().job == job.job)
        #expect(job.succeeded == 4 && job.tasks.count == 4)
        let report = try SweepClient.report(of: job)
        #expect(report.job == job.job && report.runs.map(\.run) == plan.runs)
        #expect(report.failedRuns == 0 && report.runsNotConserved == 0)
        #expect(report.groups.map(\.runs) == [2, 2], "one group per number of users, two seeds each")
    }

    @Test func aRealTimeSweepRunOnASimulatedNodeTakesItsMovesInVirtualTime() async throws {
        let cluster = try SimulatedCluster(1, registry: { _ in TaskRegistry(kinds: BikeKinds.all) })
        defer { cluster.stop() }
        let client = try await cluster.clusterClient(to: cluster[0], registry: TaskRegistry(kinds: BikeKinds.all))
        let plan = try SweepPlan(
            network: .synthetic(stations: 4, bikes: 6, emptySlots: 4),
            lists: [.users: "1", .paths: "3", .moveTime: "0.2", .timeScale: "1", .seed: "1-2"])
        let job = try await cluster.complete("the sweep", within: 60) {
            try await SweepClient.run(plan, with: client, deadline: 30, retries: 0, onStart: { _ in })
        }
        let runs = try SweepClient.report(of: job).runs
        #expect(runs.count == 2)
        for run in runs {
            let figures = try #require(run.figures)
            // One user alone: its sleeps between moves are all its time, whole move times
            // exactly, on the node's virtual clock (the machine's would add the real time
            // each step took).
            let moveTimes = figures.wallTime / 0.2
            #expect(figures.totalMoves > 1 && abs(moveTimes - Double(figures.totalMoves - 1)) < 1e-9, "\(figures)")
        }
    }

    @Test func aStoredJobWithoutRunsIsNoSweep() throws {
        let empty = TaskJobReport(job: "sweep-00000000", kind: SweepRunTask.name, schema: nil, title: "empty", coordinator: "n0", inputs: [], tasks: [], wallTime: 0, cancelReason: nil)
        #expect(throws: SweepClient.NoRuns(job: "sweep-00000000")) { try SweepClient.report(of: empty) }
    }
}
