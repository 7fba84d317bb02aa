import Testing
@testable import SpokesCluster

@Suite struct RoundTripEstimatorTests {
    @Test func theFirstAcknowledgementSetsTheEstimate() {
        var estimator = RoundTripEstimator()
        #expect(estimator.smoothed == nil)
        estimator.sent(sequence: 1, at: 10)
        #expect(estimator.acknowledged(sequence: 1, at: 10.002) == 0.002000000000000668)
        #expect(estimator.smoothed.map { abs($0 - 0.002) < 1e-9 } == true)
    }

    @Test func laterSamplesAreSmoothedAnEighthAtATime() {
        var estimator = RoundTripEstimator()
        estimator.sent(sequence: 1, at: 0)
        estimator.acknowledged(sequence: 1, at: 0.008)
        estimator.sent(sequence: 2, at: 1)
        estimator.acknowledged(sequence: 2, at: 1.016)
        #expect(abs(estimator.smoothed! - (0.008 * 7 / 8 + 0.016 / 8)) < 1e-9)
        #expect(abs(estimator.latest! - 0.016) < 1e-9)
    }

    @Test func anAcknowledgementOfAnOlderHeartbeatIsIgnored() {
        var estimator = RoundTripEstimator()
        estimator.sent(sequence: 1, at: 0)
        estimator.sent(sequence: 2, at: 0.2)
        #expect(estimator.acknowledged(sequence: 1, at: 0.25) == nil, "sequence 1 was superseded by 2")
        #expect(estimator.smoothed == nil)
        #expect(estimator.acknowledged(sequence: 2, at: 0.201) != nil)
    }

    @Test func aRepeatedAcknowledgementCountsOnce() {
        var estimator = RoundTripEstimator()
        estimator.sent(sequence: 7, at: 0)
        estimator.acknowledged(sequence: 7, at: 0.004)
        #expect(estimator.acknowledged(sequence: 7, at: 5) == nil)
        #expect(abs(estimator.smoothed! - 0.004) < 1e-9)
    }

    @Test func aClockThatStepsBackGivesZeroNotANegativeTrip() {
        var estimator = RoundTripEstimator()
        estimator.sent(sequence: 1, at: 5)
        #expect(estimator.acknowledged(sequence: 1, at: 4) == 0)
    }
}
