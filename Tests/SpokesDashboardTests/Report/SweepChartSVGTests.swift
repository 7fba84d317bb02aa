import Testing
import SpokesBikes
@testable import SpokesDashboard

@Suite struct SweepChartSVGTests {
    static func point(_ category: Int, mean: Double, lower: Double? = nil, upper: Double? = nil, name: String = "g") -> SweepChartSVG.Point {
        var summary = SampleSummary([mean])!
        if let lower, let upper { summary.ci95 = .init(lower: lower, upper: upper) }
        return SweepChartSVG.Point(category: category, summary: summary, runs: 4, name: name)
    }

    static func chart(_ series: [SweepChartSVG.Series], categories: [String] = ["100", "200", "400"]) -> SweepChartSVG {
        SweepChartSVG(categories: categories, series: series, categoryAxis: "users", valueAxis: "failed takes per run", valueUnit: "")
    }

    @Test func drawsAPointPerGroupAnIntervalWhereThereIsOneAndALinePerSeries() {
        let svg = Self.chart([
            .init(name: "paths 10", color: "#4e79a7", points: [Self.point(0, mean: 2, lower: 1, upper: 3), Self.point(1, mean: 4, lower: 3, upper: 5), Self.point(2, mean: 8)]),
            .init(name: "paths 20", color: "#f28e2b", points: [Self.point(0, mean: 5, lower: 4, upper: 6)]),
        ]).svg(label: "Failed takes against users")
        #expect(svg.components(separatedBy: "<circle class=\"mean\"").count - 1 == 4)
        #expect(svg.components(separatedBy: "<path class=\"ci\"").count - 1 == 3, "no interval for a single run")
        #expect(svg.components(separatedBy: "<polyline").count - 1 == 1, "a series of one point has no line")
        #expect(svg.contains("data-series=\"paths 10\"") && svg.contains("stroke=\"#f28e2b\""))
        #expect(svg.contains("<title>g: mean 2, 95% CI 1 to 3, p50 2, p95 2 (4 runs)</title>"))
        for label in ["100", "200", "400", "users", "failed takes per run"] { #expect(svg.contains(">\(label)</text>")) }
        #expect(MarkupBalance.problem(in: svg) == nil)
    }

    /// The y axis runs from 0 to the first nice tick above the highest interval end (10
    /// here), so a mean of 5 stands halfway up the 200-unit plot: 14 + 200 - 100.
    @Test func placesValuesOnAZeroBasedAxis() {
        let svg = Self.chart([.init(name: "", color: "#000", points: [Self.point(1, mean: 5, lower: 0.5, upper: 9.5)])]).svg(label: "x")
        #expect(svg.contains("cy=\"114\""))
        #expect(svg.contains(">10</text>"))
        // Three categories over a 410-unit plot from x 56: the middle one is centred at 56 + 1.5 x 136.67.
        #expect(svg.contains("cx=\"261\""))
    }

    @Test func clipsAnIntervalBelowZeroToTheAxisAndSaysWhereItEnds() {
        let svg = Self.chart([.init(name: "", color: "#000", points: [Self.point(0, mean: 1, lower: -2, upper: 4)])]).svg(label: "x")
        #expect(svg.contains("V214"), "drawn down to the baseline")
        #expect(svg.contains("95% CI -2 to 4"))
    }

    @Test func escapesNamesAndShortensLongLabels() {
        let hostile = "<script>alert(1)</script>"
        let svg = Self.chart(
            [.init(name: hostile, color: "#000", points: [Self.point(0, mean: 1, name: hostile)])],
            categories: ["b5262607c8a44db673b2f9acd3ddeede"]).svg(label: hostile)
        #expect(!svg.contains("<script"))
        #expect(svg.contains(">b5262607c8a…</text>"))
        #expect(MarkupBalance.problem(in: svg) == nil)
    }

    @Test func anEmptyChartSaysSoWithoutNaN() {
        let svg = Self.chart([.init(name: "", color: "#000", points: [])], categories: []).svg(label: "x")
        #expect(svg.contains(">no finished runs</text>"))
        #expect(!svg.lowercased().contains("nan") && !svg.contains("inf"))
    }
}
