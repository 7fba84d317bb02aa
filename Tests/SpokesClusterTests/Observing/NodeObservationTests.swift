import Foundation
import SpokesConcurrency
import SpokesTestKit
import Testing
@testable import SpokesCluster

/// What `NodeStatus.observe` tells a remote caller, from real nodes on loopback.
@Suite(.processLane, .timeLimit(.minutes(1)))
struct NodeObservationTests {
    @Test func aRemoteObservationHasTheTasksItRanTheJobsItCoordinatesAndItsRoundTrips() async throws {
        let nodes = try ClusterNodeTests.startNodes(2, discoveryPort: TestPorts.discovery(), cluster: "observe-\(UUID())")
        defer { nodes.forEach { $0.stop() } }
        for node in nodes {
            try await ClusterNodeTests.waitUntil(node, "seeing its peer alive") { $0.contains { $0.state == .alive } }
        }
        // n1 coordinates a job; its tasks spread over both workers.
        let (systems, following) = try nodes[1].makeSystems()
        defer { following.cancel() }
        try await withTimeout(seconds: 10) { try await systems.waitForSystems(atLeast: 2) }
        let board = nodes[1].jobBoard.track(job: "seen", kind: "bench.sleep", title: "16 x bench.sleep", total: 16)
        let outcomes = await JobRunner(systems: systems, job: "seen", kind: "bench.sleep", deadline: 10, retries: 0)
            .run(count: 16, input: { _, _ in "0.01" }, onEvent: board.record)
        board.end(cancelled: false)
        #expect(outcomes.allSatisfy { $0.output != nil })

        let status = try NodeStatus.resolve(id: ActorID(node: nodes[1].system.node, name: NodeStatus.wellKnownName), using: nodes[0].system)
        let first = try await status.observe(tasksAfter: 0)
        #expect(first.node == "n1")
        let slots = nodes[1].settings.slots
        #expect(first.slots == slots && first.waitingSlots == nodes[1].settings.waitingSlots && first.inUse == .zero)
        let ranThere = outcomes.count { $0.node == "n1" }
        #expect(first.succeeded == ranThere && first.failed == 0 && first.running == 0)
        #expect(first.tasks.count == ranThere)
        #expect(first.tasks.allSatisfy { $0.job == "seen" && $0.outcome == .succeeded && (0..<slots).contains($0.slot) && ($0.end ?? 0) >= $0.start })
        #expect(first.tasks.allSatisfy { $0.start <= first.now }, "times are on n1's clock, before its now")
        #expect(first.lastTaskSequence == UInt64(ranThere))
        let job = try #require(first.jobs.first)
        #expect(job.id == "seen" && job.state == .finished && job.done == 16 && job.coordinator == "n1")
        #expect(job.perNode.values.reduce(0) { $0 + $1.done } == 16)

        let again = try await status.observe(tasksAfter: first.lastTaskSequence)
        #expect(again.tasks.isEmpty, "nothing new since the last sequence")

        // Heartbeats go every 0.2 s; the first acknowledged one gives a round trip.
        let trips = try await withTimeout(seconds: 5) {
            while true {
                let trips = try await status.observe(tasksAfter: first.lastTaskSequence).roundTrips
                if trips["n0"] != nil { return trips }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        #expect((0..<1).contains(trips["n0"]!), "a loopback round trip is well under a second: \(trips)")
    }
}
