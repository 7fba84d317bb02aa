import SpokesClusterTestKit
import SpokesTestKit
import Testing
@testable import SpokesCluster

/// What connections carried, counted on the simulated network.
@Suite(.simulated, .hangGuard)
struct TrafficCountersTests {
    @Test func whatOneNodeSentIsWhatTheOtherReceivedOnceTheNetworkIsQuiet() async throws {
        let cluster = try SimulatedCluster(2)
        defer { cluster.stop() }
        try await cluster.awaitMesh()
        try await cluster.run(for: 1)
        try await cluster.settle()
        let (a, b) = (cluster[0].system.traffic.counts, cluster[1].system.traffic.counts)
        #expect(a.framesSent > 5 && a.bytesSent > a.framesSent * 4, "\(a)")
        #expect(a.framesSent == b.framesReceived && a.bytesSent == b.bytesReceived, "\(a) \(b)")
        #expect(b.framesSent == a.framesReceived && b.bytesSent == a.bytesReceived, "\(a) \(b)")
    }
}
