import Foundation
import SpokesBikes
import SpokesCluster
import SpokesConcurrency
import SpokesTestKit
import Synchronization
import Testing
@testable import SpokesDashboard

/// The observer on one node gathers a job coordinated by another, from real nodes.
@Suite(.processLane, .timeLimit(.minutes(1)))
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
        // Under the full suite's load one gathering may miss its call timeout: ask again.
        var asked = await observer.stations(of: job.id)
        let deadline = ContinuousClock.now + .seconds(10)
        while asked == nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            asked = await observer.stations(of: job.id)
        }
        let places = try #require(asked, "d0's observer never got the job's stations within 10 s")
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

    // MARK: - Replicated groups

    /// What a node's replica provider answers, changed by the test between snapshots.
    final class Replicas: Sendable {
        private let views: Mutex<[ReplicaGroupView]>
        init(_ views: [ReplicaGroupView]) { self.views = Mutex(views) }
        func set(_ views: [ReplicaGroupView]) { self.views.withLock { $0 = views } }
        var provider: @Sendable () async -> [ReplicaGroupView] { { self.views.withLock { $0 } } }
    }

    func view(_ id: String, on node: String, leader: String?, term: Int, commit: Int = 7) -> ReplicaGroupView {
        ReplicaGroupView(id: id, node: node, replicas: ["d0", "d1", "d2"], leader: leader, term: term,
                         role: leader == node ? "leader" : leader == nil ? "candidate" : "follower", commitIndex: commit)
    }

    @Test func theSnapshotShowsEveryMembersGroupsOnceEachAsItsBestInformedReplicaSeesIt() async throws {
        let cluster = try await DashboardCluster.start(2)
        defer { cluster.stop() }
        // d0 follows d1 in the map job's group; d1 leads it, and also holds a bike job's group.
        let fromD0 = view("taskjob-map-1", on: "d0", leader: "d1", term: 2, commit: 6)
        let fromD1 = [view("bikejob-job-9", on: "d1", leader: "d2", term: 1), view("taskjob-map-1", on: "d1", leader: "d1", term: 2)]
        cluster.nodes[0].setReplicaGroups(Replicas([fromD0]).provider)
        cluster.nodes[1].setReplicaGroups(Replicas(fromD1).provider)
        let observer = ClusterObserver(node: cluster.nodes[0])
        // Under the full suite's load one poll of d1 may miss its bound: look again.
        var seen: DashboardSnapshot?
        try await eventually("d0's snapshot has d1's groups") {
            seen = await observer.snapshot(maxAge: 0)
            return seen?.groups.count == 2
        }
        let snapshot = try #require(seen)
        #expect(snapshot.groups == fromD1, "one view per group, by id: the leader's own of the map job's")
        #expect(snapshot.groups.map(\.job) == ["job-9", "map-1"])
        #expect(snapshot.failovers.isEmpty)
    }

    @Test func aLeaderChangeBetweenTwoObservationsIsOneFailoverOnTheTimeline() async throws {
        let cluster = try await DashboardCluster.start(1)
        defer { cluster.stop() }
        let replicas = Replicas([view("taskjob-map-1", on: "d0", leader: "d1", term: 3)])
        cluster.nodes[0].setReplicaGroups(replicas.provider)
        let observer = ClusterObserver(node: cluster.nodes[0])
        let before = await observer.snapshot(maxAge: 0)
        #expect(before.groups.map(\.leader) == ["d1"])
        #expect(before.failovers.isEmpty)
        // d1 is gone: an election, then d2 leads.
        replicas.set([view("taskjob-map-1", on: "d0", leader: nil, term: 4)])
        #expect(await observer.snapshot(maxAge: 0).failovers.isEmpty, "no leader yet: no failover yet")
        replicas.set([view("taskjob-map-1", on: "d0", leader: "d2", term: 4)])
        let after = await observer.snapshot(maxAge: 0)
        #expect(after.groups.map(\.leader) == ["d2"])
        #expect(after.failovers == [FailoverView(time: after.time, group: "taskjob-map-1", job: "map-1", from: "d1", to: "d2", term: 4)])
        #expect(after.failovers.map(\.description) == ["job map-1: leader d1 -> d2 (term 4)"])
        let later = await observer.snapshot(maxAge: 0)
        #expect(later.failovers == after.failovers, "the same leader seen again is no new failover")
    }
}
