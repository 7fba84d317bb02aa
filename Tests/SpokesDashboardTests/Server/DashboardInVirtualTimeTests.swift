import Foundation
import SpokesClusterTestKit
import SpokesTestKit
import Testing
@testable import SpokesDashboard

/// A node's dashboard on its runtime's network: the nodes that ship on a simulated
/// network under a virtual clock, asked by a client on that network, in the unit lane.
@Suite(.simulated, .hangGuard)
struct DashboardInVirtualTimeTests {
    @Test func aSimulatedNodesDashboardServesItsSnapshotAndLiveEventsWithoutRealTime() async throws {
        let cluster = try SimulatedCluster(2)
        defer { cluster.stop() }
        try await cluster.awaitMesh()
        let dashboard = try Dashboard(node: cluster.nodes[0])
        dashboard.start()
        defer { dashboard.stop() }

        let reader = try await SimulatedHTTPClient.connect(on: cluster.network, from: "127.0.0.9", to: dashboard.server.address)
        reader.send(SimulatedHTTPClient.get("/api/snapshot"))
        try await cluster.run(until: "the snapshot", within: 5) { reader.statuses == [200] && reader.text.hasSuffix("}") }
        let json = try #require(reader.text.components(separatedBy: "\r\n\r\n").last)
        let snapshot = try JSONDecoder().decode(DashboardSnapshot.self, from: Data(json.utf8))
        #expect(snapshot.members.map(\.name) == ["n0", "n1"])

        let listener = try await SimulatedHTTPClient.connect(on: cluster.network, from: "127.0.0.10", to: dashboard.server.address)
        listener.send(SimulatedHTTPClient.get("/api/events"))
        try await cluster.run(until: "the first live snapshot", within: 5) { listener.text.contains("event: snapshot\ndata: {") }
        #expect(listener.text.contains("Content-Type: text/event-stream"))
        dashboard.stop()
        try await cluster.run(until: "both clients see the close", within: 1) { reader.ended && listener.ended }
    }

    @Test func aMemberThatDoesNotAnswerCostsTheSnapshotItsCallTimeoutOnTheNodesClock() async throws {
        let cluster = try SimulatedCluster(2)
        defer { cluster.stop() }
        try await cluster.awaitMesh()
        let observer = ClusterObserver(node: cluster.nodes[0], callTimeout: 1)
        cluster.pause(1)
        let start = cluster.clock.now
        let snapshot = try await cluster.complete("the snapshot", within: 5) { await observer.snapshot() }
        // Its poll of n1 waited 1 s of virtual time (on the machine's clock it would still
        // wait when the 5 virtual seconds ran out).
        let took = cluster.clock.now - start
        #expect(took >= 1 && took < 1.5, "took \(took) virtual s")
        #expect(snapshot.members.map(\.name) == ["n0", "n1"])
    }
}
