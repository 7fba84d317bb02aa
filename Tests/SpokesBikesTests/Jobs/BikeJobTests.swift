import Foundation
import SpokesCluster
import SpokesConcurrency
import SpokesClusterTestKit
import SpokesTestKit
import Testing
@testable import SpokesBikes

/// Bike jobs on in-process clusters on loopback, each test with a discovery port and
/// cluster name of its own.
@Suite(.processLane, .timeLimit(.minutes(2)))
struct BikeJobTests {
    func startCluster(_ count: Int, slots: Int = 4, faults: [ScanSystem.Faults] = []) async throws -> [ClusterNode] {
        let cluster = try TestCluster(
            count, prefix: "b", slots: slots, registry: { _ in TaskRegistry(kinds: BikeKinds.all) },
            faults: { $0 < faults.count ? faults[$0] : .init() })
        try await cluster.awaitMesh()
        return cluster.nodes
    }

    static func contendedNetwork() throws -> Network {
        var network = try BundledNetworks.milano
        network.stations = Array(network.stations.prefix(6))
        return network
    }

    func checkExactlyOnce(_ report: SimulationReport, users: Int) {
        #expect(report.results.count == users)
        #expect(report.results.map(\.user) == Array(0..<users), "one result per user")
        #expect(report.conservation.holds, "\(report.conservation)")
        #expect(report.stations.allSatisfy { $0.freeBikes >= 0 && $0.emptySlots >= 0 })
    }

    @Test func aJobSpreadsOverEveryNodeAndCountsEveryUserOnce() async throws {
        let nodes = try await startCluster(3, slots: 2)
        defer { nodes.forEach { $0.stop() } }
        let options = SimulationOptions(users: 40, paths: 5, seed: 1, timing: MoveTiming(moveTime: 0.1, timeScale: 0.02))
        let report = try await BikeJob(network: Self.contendedNetwork(), options: options).run(on: nodes[1])
        checkExactlyOnce(report, users: 40)
        #expect(report.completedUsers == 40)
        #expect(report.totalPaths == 200)
        #expect(Set(report.tasksPerNode?.keys ?? [:].keys) == ["b0", "b1", "b2"], "\(report.tasksPerNode ?? [:])")
        #expect(report.failedUsers == [])
        #expect(report.results.allSatisfy { $0.node != nil && $0.attempts == 1 })
    }

    @Test func failingTasksAreRetriedAndBikesAreConserved() async throws {
        let nodes = try await startCluster(2, faults: [.init(), .init(failEvery: 3)])
        defer { nodes.forEach { $0.stop() } }
        let options = SimulationOptions(users: 30, paths: 4, seed: 2, timing: MoveTiming(moveTime: 0.1, timeScale: 0.01))
        let report = try await BikeJob(network: Self.contendedNetwork(), options: options).run(on: nodes[0])
        checkExactlyOnce(report, users: 30)
        #expect(report.completedUsers == 30)
        #expect((report.retries ?? 0) > 0)
        #expect(report.totalPaths == 120)
    }

    @Test func aWorkerLostMidJobLosesNoUserAndNoBike() async throws {
        let nodes = try await startCluster(2, slots: 6)
        defer { nodes.forEach { $0.stop() } }
        let options = SimulationOptions(users: 24, paths: 6, seed: 3, timing: MoveTiming(moveTime: 0.1, timeScale: 0.05))
        let job = BikeJob(network: try Self.contendedNetwork(), options: options)
        let stopper = Task {
            while nodes[1].counters.running == 0 { try await Task.sleep(for: .milliseconds(5)) }
            try await Task.sleep(for: .milliseconds(30))
            await nodes[1].stop()
        }
        let report = try await job.run(on: nodes[0])
        _ = await stopper.result
        checkExactlyOnce(report, users: 24)
        #expect(report.completedUsers == 24, "failed: \(report.failedUsers ?? [])")
        #expect(report.totalPaths == 144)
        #expect((report.retries ?? 0) > 0, "the lost worker's users were retried")
    }

    @Test func aUserWhoseAttemptsRunOutIsReportedWithItsReasons() async throws {
        let nodes = try await startCluster(1, faults: [.init(failEvery: 1)])
        defer { nodes.forEach { $0.stop() } }
        let options = SimulationOptions(users: 3, paths: 2, seed: 4, timing: MoveTiming(timeScale: 0))
        let report = try await BikeJob(network: Self.contendedNetwork(), options: options, retries: 1).run(on: nodes[0])
        #expect(report.completedUsers == 0)
        #expect(report.failedUsers?.count == 3)
        #expect(report.failedUsers?.first?.reasons.count == 2)
        #expect(report.failedUsers?.first?.reasons.first?.contains("injected failure") == true)
        #expect(report.conservation.holds)
    }

    @Test func badJobParametersAreRefusedBeforeAnythingRuns() async throws {
        let nodes = try await startCluster(1)
        defer { nodes.forEach { $0.stop() } }
        await #expect(throws: SimulationError.unknownGoal("nowhere", network: "bikemi")) {
            try await BikeJob(network: Self.contendedNetwork(), options: SimulationOptions(users: 3, paths: 2, goal: "nowhere")).run(on: nodes[0])
        }
        #expect(nodes[0].counters.completed == 0)
    }
}
