import Foundation
import SpokesBikes
import SpokesCluster
import SpokesConcurrency
import SpokesTestKit
import Testing
@testable import SpokesDashboard

/// The observer on one node gathers a job coordinated by another, from real nodes.
@Suite(.timeLimit(.minutes(1)))
struct ClusterObserverTests {
    @Test func aNodeSeesEveryMemberAndAJobCoordinatedElsewhereWithItsStations() async throws {
        let cluster = try await DashboardCluster.start(3, slots: 2)
        defer { cluster.stop() }
        let observer = ClusterObserver(node: cluster.nodes[0])
        let job = BikeJob(network: try DashboardCluster.network(),
                          options: SimulationOptions(users: 24, paths: 4, seed: 3, timing: MoveTiming(moveTime: 0.1, timeScale: 0.2)))
        let running = Task { try await cluster.services[1].submit(job, listener: nil) }

        // While it runs, d0's snapshot shows it, coordinated by d1, with bikes per station.
        let seen = try await withTimeout(seconds: 10) {
            while true {
                let snapshot = await observer.snapshot(maxAge: 0)
                // Under load a poll may miss its 1 s bound; the next one answers.
                if let view = snapshot.jobs.first(where: { $0.id == job.id }), view.state == "running", view.stationBikes != nil,
                   snapshot.members.allSatisfy({ $0.running != nil }) {
                    return (snapshot, view)
                }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        #expect(seen.0.node == "d0")
        #expect(seen.0.members.map(\.name) == ["d0", "d1", "d2"])
        #expect(seen.0.members.filter(\.isServing).map(\.name) == ["d0"])
        #expect(seen.0.members.allSatisfy { $0.state == "alive" && $0.slots == 2 && $0.waitingSlots == ClusterSettings.defaultWaitingSlots })
        #expect(seen.0.members.allSatisfy { $0.slotsInUse != nil && $0.waitingSlotsInUse != nil })
        #expect(seen.0.members.allSatisfy { $0.kinds?.contains("\(BikeUserTask.name) v1") == true }, "every member says what it runs")
        #expect(seen.1.coordinator == "d1")
        #expect(seen.1.kind == BikeUserTask.name)
        #expect(seen.1.title == "\(job.network.name): 24 users x 4 paths")
        #expect(seen.1.stationBikes?.count == 6)
        let places = try #require(await observer.stations(of: job.id))
        #expect(places.stations.count == 6)
        #expect(places.network == job.network.name)
        #expect(places.stations.map(\.bikesAtStart) == job.network.stations.map(\.freeBikes))
        #expect(places.stations.map(\.capacity) == job.network.stations.map(\.capacity))

        let report = try await running.value
        let after = await observer.snapshot(maxAge: 0)
        let ended = try #require(after.jobs.first { $0.id == job.id })
        #expect(ended.state == "finished")
        #expect(ended.done == 24 && ended.failed == 0)
        #expect(ended.perNode.values.reduce(0) { $0 + $1.done } == 24)
        #expect(ended.stationBikes == report.stations.map(\.freeBikes), "the map ends as the report does")
        // Every user attempt ran somewhere and appears on the stream, on d0's clock.
        let attempts = after.tasks.filter { $0.job == job.id }
        #expect(attempts.count == 24)
        #expect(Set(attempts.map(\.node)).isSubset(of: ["d0", "d1", "d2"]))
        // Users at time scale 0.2 are waiting tasks: 24 spread over 3 nodes, 8 at once on each.
        #expect(attempts.allSatisfy { $0.outcome == "succeeded" && ($0.end ?? .infinity) <= after.time + 0.05 && (0..<8).contains($0.slot) })
        #expect(try #require(await observer.report(of: job.id)).job == job.id)
    }

    @Test func aDeadMemberLosesItsCountsAndTheSnapshotStillComesQuickly() async throws {
        let cluster = try await DashboardCluster.start(2)
        defer { cluster.stop() }
        let observer = ClusterObserver(node: cluster.nodes[0], callTimeout: 0.5)
        // Under the full suite's load one observation may miss the 0.5 s call timeout: look again.
        try await eventually("the snapshot has d1's counts") {
            let before = await observer.snapshot(maxAge: 0)
            return before.members.count == 2 && before.members[1].running == 0
        }
        await cluster.nodes[1].stop()
        let clock = ContinuousClock()
        let start = clock.now
        let after = try await withTimeout(seconds: 5) {
            while true {
                let snapshot = await observer.snapshot(maxAge: 0)
                if snapshot.members.count == 1 || snapshot.members.last?.running == nil { return snapshot }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        #expect(clock.now - start < .seconds(5))
        #expect(after.members.first?.name == "d0")
        #expect(after.members.dropFirst().allSatisfy { $0.state != "alive" || $0.running == nil })
    }

    @Test func viewersWithinTheMaximumAgeShareOneSnapshot() async throws {
        let cluster = try await DashboardCluster.start(1)
        defer { cluster.stop() }
        let observer = ClusterObserver(node: cluster.nodes[0])
        let first = await observer.snapshot(maxAge: 60)
        let second = await observer.snapshot(maxAge: 60)
        #expect(first.time == second.time)
        let fresh = await observer.snapshot(maxAge: 0)
        #expect(fresh.time > first.time)
    }
}
