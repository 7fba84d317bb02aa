/// The colour of a station by how full it is (bikes / docks), the same on the page and
/// in reports.
///
/// A diverging scale, ColorBrewer's RdYlBu, because both ends are trouble: red is an
/// empty station (no bike to take), blue a full one (no slot to leave a bike in), pale
/// yellow half full. Colours between two stops are interpolated linearly in RGB and
/// rounded to the nearest integer per channel; the page's script uses the same stops
/// (written into it from ``stops``) and the same arithmetic.
enum FillColorScale {
    /// An sRGB colour.
    struct Color: Sendable, Hashable {
        var red: Int
        var green: Int
        var blue: Int

        /// `#rrggbb`.
        var hex: String {
            "#" + [red, green, blue].map { channel in
                let text = String(min(max(channel, 0), 255), radix: 16)
                return text.count == 1 ? "0" + text : text
            }.joined()
        }
    }

    /// A colour fixed at one fill fraction.
    struct Stop: Sendable, Hashable {
        var fraction: Double
        var color: Color
    }

    /// From empty (0) to full (1), ascending.
    static let stops: [Stop] = [
        Stop(fraction: 0, color: Color(red: 0xd7, green: 0x19, blue: 0x1c)),
        Stop(fraction: 0.25, color: Color(red: 0xfd, green: 0xae, blue: 0x61)),
        Stop(fraction: 0.5, color: Color(red: 0xff, green: 0xff, blue: 0xbf)),
        Stop(fraction: 0.75, color: Color(red: 0xab, green: 0xd9, blue: 0xe9)),
        Stop(fraction: 1, color: Color(red: 0x2c, green: 0x7b, blue: 0xb6)),
    ]

    /// A station without docks (capacity 0) has no fill to speak of: neutral grey.
    static let noDocks = Color(red: 0x9c, green: 0xa3, blue: 0xaf)

    /// The legend's swatches, empty to full, with their labels.
    static let legend: [(label: String, color: Color)] = [
        ("empty", color(fraction: 0)),
        ("25%", color(fraction: 0.25)),
        ("half", color(fraction: 0.5)),
        ("75%", color(fraction: 0.75)),
        ("full", color(fraction: 1)),
    ]

    /// Bikes over docks in 0...1; nil when the station has no docks. Counts outside the
    /// possible range are clamped.
    static func fraction(bikes: Int, capacity: Int) -> Double? {
        guard capacity > 0 else { return nil }
        return min(max(Double(bikes) / Double(capacity), 0), 1)
    }

    /// The colour of a station holding `bikes` of `capacity` docks.
    static func color(bikes: Int, capacity: Int) -> Color {
        fraction(bikes: bikes, capacity: capacity).map(color(fraction:)) ?? noDocks
    }

    /// The colour at `fraction` (clamped to 0...1; NaN counts as empty).
    static func color(fraction: Double) -> Color {
        let f = fraction.isNaN ? 0 : min(max(fraction, 0), 1)
        guard var lower = stops.first else { return noDocks }
        for upper in stops.dropFirst() {
            if f <= upper.fraction {
                let t = upper.fraction > lower.fraction ? (f - lower.fraction) / (upper.fraction - lower.fraction) : 0
                return Color(
                    red: mix(lower.color.red, upper.color.red, t),
                    green: mix(lower.color.green, upper.color.green, t),
                    blue: mix(lower.color.blue, upper.color.blue, t))
            }
            lower = upper
        }
        return lower.color
    }

    /// The stops as a JavaScript array literal, `[[0, [215, 25, 28]], ...]`, for the page.
    static var javascriptStops: String {
        "[" + stops.map { "[\($0.fraction), [\($0.color.red), \($0.color.green), \($0.color.blue)]]" }.joined(separator: ", ") + "]"
    }

    /// Rounds half away from zero, as the script's `Math.round` does for these
    /// non-negative channels.
    private static func mix(_ a: Int, _ b: Int, _ t: Double) -> Int {
        Int((Double(a) + (Double(b) - Double(a)) * t).rounded(.toNearestOrAwayFromZero))
    }
}
