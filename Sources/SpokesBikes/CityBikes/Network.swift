/// A bike-share network: the company that runs it, where it is, and its stations.
///
/// Decoded from the CityBikes v2 `network` object. Unknown fields are ignored, and
/// `company`, which real files give as a list, a single string or `null`, always
/// decodes to a list.
public struct Network: Sendable, Hashable, Codable {
    public let id: String
    public let name: String
    public let href: String?
    public let company: [String]
    public let location: Location?
    public var stations: [Station]

    public init(
        id: String, name: String, href: String? = nil, company: [String] = [],
        location: Location? = nil, stations: [Station]
    ) {
        self.id = id
        self.name = name
        self.href = href
        self.company = company
        self.location = location
        self.stations = stations
    }

    enum CodingKeys: String, CodingKey {
        case id, name, href, company, location, stations
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        name = try container.decode(String.self, forKey: .name)
        href = try container.decodeIfPresent(String.self, forKey: .href)
        if let list = try? container.decodeIfPresent([String].self, forKey: .company) {
            company = list
        } else if let single = try? container.decodeIfPresent(String.self, forKey: .company) {
            company = [single]
        } else {
            company = []
        }
        location = try container.decodeIfPresent(Location.self, forKey: .location)
        stations = try container.decode([Station].self, forKey: .stations)
    }

    /// Bikes docked across all stations.
    public var totalFreeBikes: Int { stations.reduce(0) { $0 + $1.freeBikes } }
    /// Empty slots across all stations.
    public var totalEmptySlots: Int { stations.reduce(0) { $0 + $1.emptySlots } }
    /// How many stations had `null` for a count in the source data (taken as 0).
    public var stationsWithNullCounts: Int { stations.count { $0.hadNullCounts } }

    /// A made-up network of `stations` identical stations with ids `station-1`,
    /// `station-2`, ..., each holding `bikes` bikes and `emptySlots` empty slots.
    public static func synthetic(stations: Int, bikes: Int, emptySlots: Int) -> Network {
        let list = (0..<max(0, stations)).map { index in
            Station(
                id: "station-\(index + 1)", name: "Station \(index + 1)",
                freeBikes: bikes, emptySlots: emptySlots)
        }
        return Network(id: "synthetic", name: "Synthetic network", stations: list)
    }
}

/// Where a network operates.
public struct Location: Sendable, Hashable, Codable {
    public let city: String?
    public let country: String?
    public let latitude: Double?
    public let longitude: Double?

    public init(city: String?, country: String?, latitude: Double?, longitude: Double?) {
        self.city = city
        self.country = country
        self.latitude = latitude
        self.longitude = longitude
    }
}
