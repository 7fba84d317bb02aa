import FoundationEssentials
import Glibc

/// Places stations in a box: an equirectangular projection (longitude scaled by the
/// cosine of the mean latitude, so a city keeps its shape), fitted to the box with a
/// margin, aspect kept, centred.
///
/// The dashboard's script (``DashboardPage/javascript``) does the same arithmetic, so a
/// city looks the same on the page and in a report. Coordinates that are not finite are
/// ignored when fitting and land in the middle of the box; when every station is at one
/// point, they all do. No output is ever NaN.
struct MapProjection: Sendable, Hashable {
    /// A point in the box, y downwards.
    struct Point: Sendable, Hashable {
        var x: Double
        var y: Double
    }

    /// The smallest cosine used for the longitude scale, so maps near a pole stay finite.
    static let minimumLongitudeScale = 0.01

    let width: Double
    let height: Double
    private let longitudeScale: Double
    private let scale: Double
    private let centreX: Double
    private let centreY: Double

    /// A projection fitting `coordinates` (latitude, longitude in degrees) into a box of
    /// `width` x `height`, leaving `margin` free on every side.
    init(coordinates: [(latitude: Double, longitude: Double)], width: Double, height: Double, margin: Double) {
        self.width = Self.finite(width)
        self.height = Self.finite(height)
        let usable = coordinates.filter { $0.latitude.isFinite && $0.longitude.isFinite }
        longitudeScale = Self.longitudeScale(for: usable)
        guard let first = usable.first else {
            scale = 0
            centreX = 0
            centreY = 0
            return
        }
        var minX = first.longitude * longitudeScale, maxX = minX
        var minY = -first.latitude, maxY = minY
        for place in usable.dropFirst() {
            let x = place.longitude * longitudeScale, y = -place.latitude
            minX = min(minX, x)
            maxX = max(maxX, x)
            minY = min(minY, y)
            maxY = max(maxY, y)
        }
        let innerWidth = max(0, self.width - 2 * Self.finite(margin))
        let innerHeight = max(0, self.height - 2 * Self.finite(margin))
        let spanX = maxX - minX, spanY = maxY - minY
        var fit = Double.infinity
        if spanX > 0 { fit = min(fit, innerWidth / spanX) }
        if spanY > 0 { fit = min(fit, innerHeight / spanY) }
        scale = fit.isFinite ? fit : 0
        centreX = (minX + maxX) / 2
        centreY = (minY + maxY) / 2
    }

    /// Where a station at `latitude`, `longitude` goes in the box.
    func project(latitude: Double, longitude: Double) -> Point {
        guard latitude.isFinite, longitude.isFinite else { return Point(x: width / 2, y: height / 2) }
        let x = width / 2 + (longitude * longitudeScale - centreX) * scale
        let y = height / 2 + (-latitude - centreY) * scale
        return Point(x: Self.finite(x, or: width / 2), y: Self.finite(y, or: height / 2))
    }

    /// Box units per kilometre on the ground (0 when the stations have no extent), for a
    /// scale bar. A degree of latitude is taken as 111.32 km.
    var unitsPerKilometre: Double { scale / 111.32 }

    /// Height over width of the stations' extent once projected: the shape a map box
    /// should have. 1 when there is no extent (no stations, or all at one point); kept
    /// within `range` so a long thin network still gets a usable box.
    static func aspectRatio(of coordinates: [(latitude: Double, longitude: Double)], within range: ClosedRange<Double>) -> Double {
        let usable = coordinates.filter { $0.latitude.isFinite && $0.longitude.isFinite }
        let k = longitudeScale(for: usable)
        guard let minLatitude = usable.map(\.latitude).min(), let maxLatitude = usable.map(\.latitude).max(),
              let minLongitude = usable.map(\.longitude).min(), let maxLongitude = usable.map(\.longitude).max()
        else { return min(max(1, range.lowerBound), range.upperBound) }
        let spanX = (maxLongitude - minLongitude) * k, spanY = maxLatitude - minLatitude
        let ratio = spanX > 0 && spanY > 0 ? spanY / spanX : 1
        return min(max(ratio, range.lowerBound), range.upperBound)
    }

    private static func longitudeScale(for coordinates: [(latitude: Double, longitude: Double)]) -> Double {
        guard !coordinates.isEmpty else { return 1 }
        let meanLatitude = coordinates.reduce(0) { $0 + $1.latitude } / Double(coordinates.count)
        return max(minimumLongitudeScale, cos(meanLatitude * .pi / 180))
    }

    private static func finite(_ value: Double, or fallback: Double = 0) -> Double {
        value.isFinite ? value : fallback
    }
}
