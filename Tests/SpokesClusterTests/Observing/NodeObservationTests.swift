import Foundation
import SpokesClusterTestKit
import SpokesConcurrency
import SpokesTestKit
import Testing
@testable import SpokesCluster

/// What `NodeStatus.observe` tells a remote caller, from nodes on a simulated network
/// under a virtual clock.
@Suite(.simulated, .hangGuard)
struct NodeObservationTests {
    @Test func aRemoteObservationHasTheTasksItRanTheJobsItCoordinatesAndItsRoundTrips() async throws {
        let cluster = try SimulatedCluster(2)
        defer { cluster.stop() }
        try await cluster.awaitMesh()
        let nodes = cluster.nodes
        // n1 coordinates a job; its tasks spread over both workers.
        let (systems, following) = try nodes[1].makeSystems()
        defer { following.cancel() }
        try await cluster.complete("n1 offers both workers", within: 5) { try await systems.waitForSystems(atLeast: 2) }
        let board = nodes[1].jobBoard.track(job: "seen", kind: "bench.sleep", title: "16 x bench.sleep", total: 16)
        let outcomes = try await cluster.complete("the job of 16 tasks", within: 10) {
            await JobRunner(systems: systems, job: "seen", kind: "bench.sleep", deadline: SchedulingTests.noDeadline, retries: 0)
                .run(count: 16, input: { _, _ in "0.01" }, onEvent: board.record)
        }
        board.end(cancelled: false)
        #expect(outcomes.allSatisfy { $0.output != nil })

        let status = try NodeStatus.resolve(id: ActorID(node: nodes[1].system.node, name: NodeStatus.wellKnownName), using: nodes[0].system)
        let first = try await cluster.complete("an observation", within: 5) { try await status.observe(tasksAfter: 0) }
        #expect(first.node == "n1")
        let slots = nodes[1].settings.slots
        #expect(first.slots == slots && first.waitingSlots == nodes[1].settings.waitingSlots && first.inUse == .zero)
        let ranThere = outcomes.count { $0.node == "n1" }
        #expect(ranThere > 0 && ranThere < 16, "the tasks spread over both nodes: \(ranThere) on n1")
        #expect(first.succeeded == ranThere && first.failed == 0 && first.running == 0)
        #expect(first.tasks.count == ranThere)
        #expect(first.tasks.allSatisfy { $0.job == "seen" && $0.outcome == .succeeded && (0..<slots).contains($0.slot) && ($0.end ?? 0) >= $0.start })
        #expect(first.tasks.allSatisfy { $0.start <= first.now }, "times are on n1's clock, before its now")
        #expect(first.lastTaskSequence == UInt64(ranThere))
        let job = try #require(first.jobs.first)
        #expect(job.id == "seen" && job.state == .finished && job.done == 16 && job.coordinator == "n1")
        #expect(job.perNode.values.reduce(0) { $0 + $1.done } == 16)

        let again = try await cluster.complete("another observation", within: 5) { try await status.observe(tasksAfter: first.lastTaskSequence) }
        #expect(again.tasks.isEmpty, "nothing new since the last sequence")

        // Heartbeats go every 0.2 s, and one in five asks for an answer; the first answer
        // gives a round trip, which on a network with no delay takes no virtual time.
        let interval = nodes[1].settings.heartbeatInterval
        let rounds = Double(WireMessage.Heartbeat.acknowledgedEvery + 1)
        var trips: [String: Double] = [:]
        try await cluster.run(until: "n1 measured a round trip to n0", within: rounds * interval, step: 0.05) {
            trips = try await status.observe(tasksAfter: first.lastTaskSequence).roundTrips
            return trips["n0"] != nil
        }
        #expect((0..<interval).contains(trips["n0"]!), "a round trip without delay is shorter than a heartbeat interval: \(trips)")
    }
}
