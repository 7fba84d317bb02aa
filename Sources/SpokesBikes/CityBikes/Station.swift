/// One bike station: where it is, and how many bikes and empty slots it has.
///
/// `Station` is both the CityBikes model (decoded from the API's snake_case JSON) and
/// the state of a station during a simulation. It is a value: `takeBike()` and
/// `leaveBike()` each check and change the counts in one mutating call, so whoever owns
/// the value (an actor such as ``BikeStation``) makes them atomic. There is deliberately
/// no way to check first and act later: that is the race the original sample had.
///
/// Invariant: `freeBikes + emptySlots == capacity`, and neither count goes below zero.
public struct Station: Sendable, Hashable, Identifiable {
    /// The CityBikes station id (a hash in real networks, e.g. `b5262607c8a44db673b2f9acd3ddeede`).
    public let id: String
    public let name: String
    public let latitude: Double
    public let longitude: Double
    /// Bikes docked and free to take.
    public private(set) var freeBikes: Int
    /// Docks with no bike in them, where a rider can leave one.
    public private(set) var emptySlots: Int
    /// True when the source data had `null` for `free_bikes` or `empty_slots`; such a
    /// count is taken as 0. Not part of the encoded form.
    public let hadNullCounts: Bool

    /// Creates a station. Negative counts are clamped to zero; use the CityBikes decoder
    /// to have them reported as errors instead.
    public init(
        id: String, name: String, latitude: Double = 0, longitude: Double = 0,
        freeBikes: Int, emptySlots: Int, hadNullCounts: Bool = false
    ) {
        self.id = id
        self.name = name
        self.latitude = latitude
        self.longitude = longitude
        self.freeBikes = max(0, freeBikes)
        self.emptySlots = max(0, emptySlots)
        self.hadNullCounts = hadNullCounts
    }

    /// Docks in the station, with or without a bike.
    public var capacity: Int { freeBikes + emptySlots }

    /// Most bikes, and most empty slots, one station may have: a network file or a peer
    /// claiming more is refused, so sums over any accepted network never overflow.
    public static let maximumCount = 1_000_000

    /// Takes one bike if there is one. Returns whether a bike was taken.
    public mutating func takeBike() -> Bool {
        guard freeBikes > 0 else { return false }
        freeBikes -= 1
        emptySlots += 1
        return true
    }

    /// Leaves one bike if there is an empty slot. Returns whether the bike was left.
    public mutating func leaveBike() -> Bool {
        guard emptySlots > 0 else { return false }
        emptySlots -= 1
        freeBikes += 1
        return true
    }
}

extension Station: Codable {
    enum CodingKeys: String, CodingKey {
        case id, name, latitude, longitude
        case freeBikes = "free_bikes"
        case emptySlots = "empty_slots"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        name = Self.unescapingLiteralEscapes(try container.decode(String.self, forKey: .name))
        latitude = try container.decode(Double.self, forKey: .latitude)
        longitude = try container.decode(Double.self, forKey: .longitude)
        let bikes = try container.decodeIfPresent(Int.self, forKey: .freeBikes)
        let slots = try container.decodeIfPresent(Int.self, forKey: .emptySlots)
        for (count, key) in [(bikes, CodingKeys.freeBikes), (slots, .emptySlots)] {
            if let count, !(0...Self.maximumCount).contains(count) {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container,
                    debugDescription: "station '\(id)' has \(key.stringValue) \(count); a count is 0 to \(Self.maximumCount)")
            }
        }
        for (degrees, key, limit) in [(latitude, CodingKeys.latitude, 90.0), (longitude, .longitude, 180.0)] where !(-limit...limit).contains(degrees) {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: container,
                debugDescription: "station '\(id)' has \(key.stringValue) \(degrees); it is -\(Int(limit)) to \(Int(limit)) degrees")
        }
        freeBikes = bikes ?? 0
        emptySlots = slots ?? 0
        hadNullCounts = bikes == nil || slots == nil
    }

    /// Some CityBikes snapshots escape twice, so a name holds the six characters `\u0027`
    /// where it means `'` (Milano's "Medaglie D\u0027Oro"). Such sequences become the
    /// character they name; anything else is left as it is.
    static func unescapingLiteralEscapes(_ text: String) -> String {
        // A byte scan first: nearly every name has no backslash, and `contains` on a
        // String was 3.5% of a small bike job's CPU (decoding the network per replica).
        guard text.utf8.contains(UInt8(ascii: "\\")), text.contains("\\u") else { return text }
        var result = ""
        var rest = Substring(text)
        while let range = rest.firstRange(of: "\\u") {
            result += rest[..<range.lowerBound]
            let digits = rest[range.upperBound...].prefix(4)
            if digits.count == 4, let value = UInt32(digits, radix: 16), let scalar = Unicode.Scalar(value) {
                result.unicodeScalars.append(scalar)
                rest = rest[range.upperBound...].dropFirst(4)
            } else {
                result += rest[range]
                rest = rest[range.upperBound...]
            }
        }
        return result + rest
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(name, forKey: .name)
        try container.encode(latitude, forKey: .latitude)
        try container.encode(longitude, forKey: .longitude)
        try container.encode(freeBikes, forKey: .freeBikes)
        try container.encode(emptySlots, forKey: .emptySlots)
    }
}
