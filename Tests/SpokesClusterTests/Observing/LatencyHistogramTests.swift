import SpokesClusterTestKit
import Testing
@testable import SpokesCluster

@Suite struct LatencyHistogramTests {
    @Test func bucketsAreCumulativeAndAnObservationOnABoundCountsInIt() {
        let histogram = LatencyHistogram(bounds: [1, 0.1, 0.1, .nan])
        #expect(histogram.bounds == [0.1, 1], "sorted, duplicates and NaN dropped")
        for seconds in [0.1, 0.5, 3, -2, .nan] { histogram.observe(seconds) }
        let snapshot = histogram.snapshot
        #expect(snapshot.buckets == [.init(bound: 0.1, count: 3), .init(bound: 1, count: 4)], "0.1, and -2 and NaN as 0; then 0.5")
        #expect(snapshot.count == 5 && snapshot.sum == 3.6)
    }
}

/// What connections carried, counted on the simulated network.
@Suite(.timeLimit(.minutes(1)))
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
