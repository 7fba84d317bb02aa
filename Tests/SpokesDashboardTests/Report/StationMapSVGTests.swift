import Testing
@testable import SpokesDashboard

@Suite struct StationMapSVGTests {
    let stations = [
        StationMapSVG.Station(name: "Duomo", latitude: 45.4647, longitude: 9.1888, bikes: 2, emptySlots: 28),
        StationMapSVG.Station(name: "Cadorna 1", latitude: 45.4680, longitude: 9.1756, bikes: 19, emptySlots: 1),
        StationMapSVG.Station(name: "Empty dock", latitude: 45.4600, longitude: 9.2000, bikes: 0, emptySlots: 0),
    ]

    func occurrences(of needle: String, in text: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }

    @Test func drawsOneTitledCirclePerStation() {
        let svg = StationMapSVG(fitting: stations, width: 300, height: 300).svg(stations, label: "map")
        #expect(occurrences(of: "<circle class=\"station\"", in: svg) == 3)
        #expect(occurrences(of: "<title>", in: svg) == 3)
        #expect(svg.contains("<title>Duomo: 2 bikes, 28 empty slots (30 docks)</title>"))
        #expect(svg.contains("<title>Cadorna 1: 19 bikes, 1 empty slot (20 docks)</title>"))
    }

    @Test func coloursStationsByFill() {
        let svg = StationMapSVG(fitting: stations, width: 300, height: 300).svg(stations, label: "map")
        #expect(svg.contains("fill=\"\(FillColorScale.color(bikes: 2, capacity: 30).hex)\""))
        #expect(svg.contains("fill=\"\(FillColorScale.noDocks.hex)\""))
    }

    @Test func escapesNamesAndTheLabel() {
        let hostile = [StationMapSVG.Station(name: "<script>alert(1)</script>&\"'", latitude: 45, longitude: 9, bikes: 1, emptySlots: 1)]
        let svg = StationMapSVG(fitting: hostile, width: 100, height: 100).svg(hostile, label: "<b>")
        #expect(!svg.contains("<script"))
        #expect(svg.contains("&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;&#39;: 1 bike"))
        #expect(svg.contains("aria-label=\"&lt;b&gt;\""))
    }

    @Test func radiusGrowsWithDocksWithinBounds() {
        #expect(StationMapSVG.radius(capacity: 0) == 2)
        #expect(StationMapSVG.radius(capacity: -4) == 2)
        #expect(StationMapSVG.radius(capacity: 16) == 4)
        #expect(StationMapSVG.radius(capacity: 10_000) == 6)
    }

    @Test func drawsAScaleBarOnlyWhenTheMapHasAnExtent() {
        let spread = StationMapSVG(fitting: stations, width: 300, height: 300).svg(stations, label: "map")
        #expect(spread.contains("class=\"scale-bar\""))
        #expect(spread.contains(" m</text>") || spread.contains(" km</text>"))
        let one = [stations[0]]
        #expect(!StationMapSVG(fitting: one, width: 300, height: 300).svg(one, label: "map").contains("scale-bar"))
    }

    @Test func neverWritesNaN() {
        let odd = [StationMapSVG.Station(name: "Nowhere", latitude: .nan, longitude: .infinity, bikes: 1, emptySlots: 1)]
        let svg = StationMapSVG(fitting: odd, width: 200, height: 100).svg(odd, label: "map")
        #expect(!svg.lowercased().contains("nan"))
        #expect(!svg.lowercased().contains("inf"))
        #expect(svg.contains("cx=\"100\" cy=\"50\""))
    }
}
