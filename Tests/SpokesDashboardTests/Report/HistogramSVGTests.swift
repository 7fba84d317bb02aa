import Testing
@testable import SpokesDashboard

@Suite struct HistogramSVGTests {
    func chart(_ values: [Double], step: Double, countName: String = "users") -> String {
        let histogram = Histogram(values: values, step: step)
        return HistogramSVG(
            histogram: histogram, valueAxis: "waiting time (s)", valueUnit: "s", countName: countName, countNameSingular: "user",
            oneValuePerBin: histogram.width == step
        ).svg(label: "waiting")
    }

    func occurrences(of needle: String, in text: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }

    @Test func drawsOneTitledBarPerBin() {
        let svg = chart([0, 0, 0.1, 0.3], step: 0.1)
        #expect(occurrences(of: "<rect class=\"bar\"", in: svg) == 4)
        #expect(svg.contains("<title>0 s: 2 users</title>"))
        #expect(svg.contains("<title>0.3 s: 1 user</title>"))
        #expect(svg.contains("<title>0.2 s: 0 users</title>"))
    }

    @Test func labelsBothAxes() {
        let svg = chart([0, 1, 2], step: 1)
        #expect(svg.contains(">waiting time (s)</text>"))
        #expect(svg.contains(">users</text>"))
    }

    @Test func namesRangesWhenBinsHoldSeveralValues() {
        let svg = chart((0...99).map(Double.init), step: 1)
        #expect(svg.contains("<title>0 to under 5 s: 5 users</title>"))
    }

    @Test func saysSoWhenThereIsNothingToCount() {
        let svg = chart([], step: 0.1)
        #expect(svg.contains(">no users</text>"))
        #expect(!svg.contains("class=\"bar\""))
    }

    @Test func escapesWhatItCounts() {
        #expect(chart([1], step: 1, countName: "<i>").contains("&lt;i&gt;"))
        #expect(!chart([1], step: 1, countName: "<i>").contains("<i>"))
    }

    @Test func barHeightsNeverExceedThePlot() {
        let svg = chart(Array(repeating: 0.2, count: 7) + [0.1], step: 0.1)
        #expect(!svg.contains("y=\"-"))
        #expect(!svg.lowercased().contains("nan"))
    }
}
