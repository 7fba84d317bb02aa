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
