import Testing
@testable import SpokesDashboard

@Suite struct HistogramTests {
    @Test func givesEachStepABinWhenTheStepsAreFew() {
        let histogram = Histogram(values: [0, 0, 0.1, 0.3, 0.3, 0.3], step: 0.1)
        #expect(histogram.width == 0.1)
        #expect(histogram.bins.map(\.count) == [2, 1, 0, 3])
        #expect(histogram.total == 6)
        #expect(histogram.largestCount == 3)
    }

    @Test func groupsManyStepsIntoNiceBinsAtMostTheLimit() {
        let values = (0...999).map(Double.init)
        let histogram = Histogram(values: values, step: 1, maximumBins: 24)
        #expect(histogram.width == 50)
        #expect(histogram.bins.count == 20)
        #expect(histogram.bins.allSatisfy { $0.count == 50 })
        #expect(histogram.total == 1000)
    }

    @Test func hasNoBinsWithoutValues() {
        let histogram = Histogram(values: [], step: 0.1)
        #expect(histogram.bins.isEmpty)
        #expect(histogram.total == 0)
        #expect(histogram.largestCount == 0)
    }

    @Test func leavesOutNaNAndInfinityAndSaysHowMany() {
        let histogram = Histogram(values: [1, .nan, 2, .infinity, -.infinity], step: 1)
        #expect(histogram.ignored == 3)
        #expect(histogram.total == 2)
        #expect(histogram.bins.allSatisfy { $0.lower.isFinite && $0.upper.isFinite })
    }

    @Test func putsNegativeValuesInTheFirstBin() {
        #expect(Histogram(values: [-5, 0, 1], step: 1).bins.map(\.count) == [2, 1])
    }

    @Test func copesWithoutAUsableStep() {
        let zeros = Histogram(values: [0, 0, 0], step: 0)
        #expect(zeros.bins.map(\.count) == [3])
        #expect(zeros.width == 1)
        let spread = Histogram(values: [0, 2.5, 7.3], step: .nan, maximumBins: 10)
        #expect(spread.width == 1)
        #expect(spread.total == 3)
        #expect(spread.bins.count == 8)
    }

    @Test func aSingleValueMakesOneFullBin() {
        let histogram = Histogram(values: [10, 10, 10], step: 1)
        #expect(histogram.bins.count == 11)
        #expect(histogram.bins.last?.count == 3)
        #expect(histogram.bins.last?.lower == 10)
    }

    @Test func extremeValuesAndStepsBinWithoutTrapping() {
        // A report from a peer may hold any finite number: bins are counted, never trapped on.
        let huge = Histogram(values: [.greatestFiniteMagnitude, 1, 0], step: 1e-300)
        #expect(huge.total == 3)
        #expect(huge.bins.count <= 24 * 10)
        let tiny = Histogram(values: [4 * .leastNonzeroMagnitude, 0], step: 0)
        #expect(tiny.total == 2)
    }
}
