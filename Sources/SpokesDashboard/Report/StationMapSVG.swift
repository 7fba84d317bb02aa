import SpokesBikes

/// A network's stations as an inline SVG map: one `circle` (class `station`) per
/// station, placed by ``MapProjection``, sized by docks and coloured by
/// ``FillColorScale``, with a `<title>` tooltip naming it and its counts.
struct StationMapSVG {
    /// What the map needs of a station.
    struct Station: Sendable, Hashable {
        var name: String
        var latitude: Double
        var longitude: Double
        var bikes: Int
        var emptySlots: Int

        var capacity: Int { max(0, bikes) + max(0, emptySlots) }

        init(name: String, latitude: Double, longitude: Double, bikes: Int, emptySlots: Int) {
            self.name = name
            self.latitude = latitude
            self.longitude = longitude
            self.bikes = bikes
            self.emptySlots = emptySlots
        }

        init(_ state: SimulationReport.StationState) {
            self.init(
                name: state.name, latitude: state.latitude, longitude: state.longitude,
                bikes: state.freeBikes, emptySlots: state.emptySlots)
        }
    }

    let projection: MapProjection

    /// A map whose box fits every station of `stations` (pass all the stations that
    /// will be drawn with it, so several maps of one network line up).
    init(fitting stations: [Station], width: Double, height: Double) {
        projection = MapProjection(
            coordinates: stations.map { ($0.latitude, $0.longitude) }, width: width, height: height, margin: 10)
    }

    /// The radius of a station with `capacity` docks: larger stations read larger, within
    /// 2 to 6 units. The page uses the same formula.
    static func radius(capacity: Int) -> Double {
        min(6, 2 + Double(max(0, capacity)).squareRoot() * 0.5)
    }

    /// The tooltip of a station: `Duomo: 2 bikes, 28 empty slots (30 docks)`.
    static func tooltip(_ station: Station) -> String {
        let bikes = "\(station.bikes) bike\(station.bikes == 1 ? "" : "s")"
        let slots = "\(station.emptySlots) empty slot\(station.emptySlots == 1 ? "" : "s")"
        return "\(station.name): \(bikes), \(slots) (\(station.capacity) docks)"
    }

    /// The SVG element; `label` is its accessible name (already plain text, escaped here).
    func svg(_ stations: [Station], label: String) -> String {
        let width = HTML.number(projection.width), height = HTML.number(projection.height)
        var svg = """
            <svg class="map" viewBox="0 0 \(width) \(height)" width="\(width)" height="\(height)" role="img" \
            aria-label="\(HTML.escape(label))" xmlns="http://www.w3.org/2000/svg">
            <rect class="map-ground" x="0" y="0" width="\(width)" height="\(height)" rx="6"/>

            """
        svg += scaleBar()
        for station in stations {
            let point = projection.project(latitude: station.latitude, longitude: station.longitude)
            let fill = FillColorScale.color(bikes: station.bikes, capacity: station.capacity).hex
            svg += "<circle class=\"station\" cx=\"\(HTML.number(point.x))\" cy=\"\(HTML.number(point.y))\" "
            svg += "r=\"\(HTML.number(Self.radius(capacity: station.capacity)))\" fill=\"\(fill)\">"
            svg += "<title>\(HTML.escape(Self.tooltip(station)))</title></circle>\n"
        }
        return svg + "</svg>"
    }

    /// A bar of a round number of kilometres (or metres) in the bottom-left corner,
    /// about a fifth of the width; nothing when the map has no extent.
    private func scaleBar() -> String {
        let perKilometre = projection.unitsPerKilometre
        guard perKilometre > 0, perKilometre.isFinite else { return "" }
        let kilometres = AxisTicks.niceStep(projection.width / 5 / perKilometre)
        let length = kilometres * perKilometre
        let label = kilometres >= 1 ? "\(AxisTicks.label(kilometres)) km" : "\(AxisTicks.label(kilometres * 1000)) m"
        let x = 12.0, y = projection.height - 12
        return """
            <g class="scale-bar"><path d="M\(HTML.number(x)) \(HTML.number(y - 4))v4h\(HTML.number(length))v-4"/>\
            <text x="\(HTML.number(x + length + 5))" y="\(HTML.number(y))">\(label)</text></g>

            """
    }
}
