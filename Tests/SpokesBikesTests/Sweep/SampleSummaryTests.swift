import Testing
@testable import SpokesBikes

@Suite struct SampleSummaryTests {
    func close(_ a: Double, _ b: Double, _ tolerance: Double = 1e-9) -> Bool { abs(a - b) <= tolerance }

    /// 1, 2, 3, 4, 10 by hand: mean 4; squares 9 + 4 + 1 + 0 + 36 = 50, s = sqrt(50 / 4)
    /// = 3.5355339; median 3; p95 at rank 4 x 0.95 = 3.8, so 4 + 0.8 x (10 - 4) = 8.8;
    /// half width t(0.975, 4) x s / sqrt(5) = 2.7764451 x 1.5811388 = 4.3899452.
    @Test func matchesHandComputedFigures() throws {
        let summary = try #require(SampleSummary([4, 10, 1, 3, 2]))
        #expect(summary.mean == 4)
        #expect(close(summary.standardDeviation, 3.5355339059))
        #expect(summary.p50 == 3)
        #expect(close(summary.p95, 8.8))
        #expect(summary.minimum == 1 && summary.maximum == 10)
        let interval = try #require(summary.ci95)
        #expect(close(interval.lower, 4 - 4.3899452, 1e-6))
        #expect(close(interval.upper, 4 + 4.3899452, 1e-6))
    }

    /// Two values 2 and 4: mean 3, s = sqrt(2), t(0.975, 1) = 12.7062047, half width
    /// 12.7062047 x sqrt(2) / sqrt(2) = 12.7062047. Medians interpolate: 3; p95 = 2 + 0.95 x 2.
    @Test func interpolatesPercentilesBetweenRanks() throws {
        let summary = try #require(SampleSummary([4, 2]))
        #expect(summary.p50 == 3)
        #expect(close(summary.p95, 3.9))
        #expect(close(try #require(summary.ci95).upper, 3 + 12.7062047, 1e-6))
        let even = try #require(SampleSummary([1, 2, 3, 4]))
        #expect(even.p50 == 2.5)
        #expect(close(even.p95, 3.85))
    }

    @Test func aSingleRunHasNoIntervalAndEqualValuesAZeroWidthOne() throws {
        let one = try #require(SampleSummary([7]))
        #expect(one.mean == 7 && one.p50 == 7 && one.p95 == 7 && one.standardDeviation == 0)
        #expect(one.ci95 == nil)
        let same = try #require(SampleSummary([5, 5, 5]))
        #expect(same.ci95 == SampleSummary.Interval(lower: 5, upper: 5))
        #expect(SampleSummary([]) == nil)
    }

    @Test func usesTheQuantileItIsGiven() throws {
        let summary = try #require(SampleSummary([1, 3], tQuantile: { degrees in
            #expect(degrees == 1)
            return 2
        }))
        // s = sqrt(2), half = 2 x sqrt(2) / sqrt(2) = 2.
        #expect(summary.ci95 == SampleSummary.Interval(lower: 0, upper: 4))
    }
}
