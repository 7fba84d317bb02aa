import Testing
@testable import SpokesDashboard

@Suite struct FillColorScaleTests {
    @Test func emptyIsRedAndFullIsBlue() {
        #expect(FillColorScale.color(bikes: 0, capacity: 20).hex == "#d7191c")
        #expect(FillColorScale.color(bikes: 20, capacity: 20).hex == "#2c7bb6")
        #expect(FillColorScale.color(bikes: 10, capacity: 20).hex == "#ffffbf")
    }

    @Test func interpolatesBetweenStopsAndRoundsHalfUp() {
        // Halfway from #d7191c to #fdae61: 234, 99.5 -> 100, 62.5 -> 63.
        #expect(FillColorScale.color(fraction: 0.125).hex == "#ea643f")
    }

    @Test func aStationWithoutDocksIsGrey() {
        #expect(FillColorScale.fraction(bikes: 0, capacity: 0) == nil)
        #expect(FillColorScale.color(bikes: 3, capacity: 0) == FillColorScale.noDocks)
        #expect(FillColorScale.color(bikes: 0, capacity: -2) == FillColorScale.noDocks)
    }

    @Test func clampsImpossibleCountsAndNaN() {
        #expect(FillColorScale.color(bikes: 25, capacity: 20) == FillColorScale.color(fraction: 1))
        #expect(FillColorScale.color(bikes: -3, capacity: 20) == FillColorScale.color(fraction: 0))
        #expect(FillColorScale.color(fraction: .nan) == FillColorScale.color(fraction: 0))
        #expect(FillColorScale.color(fraction: .infinity) == FillColorScale.color(fraction: 1))
    }

    @Test func legendRunsFromEmptyToFull() {
        #expect(FillColorScale.legend.map(\.label) == ["empty", "25%", "half", "75%", "full"])
        #expect(FillColorScale.legend.first?.color == FillColorScale.stops.first?.color)
        #expect(FillColorScale.legend.last?.color == FillColorScale.stops.last?.color)
    }

    @Test func givesTheScriptTheSameStops() {
        #expect(FillColorScale.javascriptStops
            == "[[0.0, [215, 25, 28]], [0.25, [253, 174, 97]], [0.5, [255, 255, 191]], [0.75, [171, 217, 233]], [1.0, [44, 123, 182]]]")
    }
}
