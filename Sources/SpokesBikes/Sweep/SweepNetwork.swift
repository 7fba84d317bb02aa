/// The network a sweep runs on, as its runs' task inputs carry it.
///
/// Bundled and synthetic networks travel as a name or three numbers (tens of bytes), and
/// every node rebuilds the same stations; only a network from a file travels whole (the
/// Milano file's stations are about 60 KB of JSON). Whatever a peer sends is checked
/// before it is used: no count can make a node allocate without bound or overflow a sum.
public enum SweepNetwork: Sendable, Hashable, Codable {
    /// A network compiled into every node.
    public enum Bundled: String, Sendable, Hashable, Codable, CaseIterable {
        /// ``BundledNetworks/milano``.
        case milano
    }

    /// Most stations a synthetic network may have, and most bikes or empty slots at each
    /// (the limits of `spokes simulate --stations/--bikes/--slots`).
    public static let maximumSyntheticStations = 100_000
    public static let maximumSyntheticDocks = 10_000
    /// Most stations a network carried whole may have, and the largest count of bikes or
    /// empty slots at one station: far beyond any real network, small enough that no
    /// total overflows.
    public static let maximumStations = 1_000_000
    public static let maximumCountPerStation = 1_000_000_000

    case bundled(name: Bundled)
    /// `Network.synthetic(stations:bikes:emptySlots:)`.
    case synthetic(stations: Int, bikes: Int, emptySlots: Int)
    /// A network read from a file, carried whole.
    case inline(network: Network)

    /// The stations this describes, after checking the limits above.
    public func resolve() throws(SweepPlanError) -> Network {
        switch self {
        case .bundled(.milano):
            return try Self.milano.get()
        case .synthetic(let stations, let bikes, let emptySlots):
            guard (1...Self.maximumSyntheticStations).contains(stations),
                  (0...Self.maximumSyntheticDocks).contains(bikes), (0...Self.maximumSyntheticDocks).contains(emptySlots) else {
                throw .network("a synthetic network of \(stations) stations with \(bikes) bikes and \(emptySlots) slots each: "
                    + "expected 1 to \(Self.maximumSyntheticStations) stations and 0 to \(Self.maximumSyntheticDocks) bikes and slots")
            }
            return Network.synthetic(stations: stations, bikes: bikes, emptySlots: emptySlots)
        case .inline(let network):
            guard network.stations.count <= Self.maximumStations else {
                throw .network("network '\(network.id)' has \(network.stations.count) stations; at most \(Self.maximumStations) are allowed")
            }
            let limit = 0...Self.maximumCountPerStation
            if let station = network.stations.first(where: { !limit.contains($0.freeBikes) || !limit.contains($0.emptySlots) }) {
                throw .network("station '\(station.id)' of network '\(network.id)' has \(station.freeBikes) bikes and "
                    + "\(station.emptySlots) empty slots; each count must be 0 to \(Self.maximumCountPerStation)")
            }
            return network
        }
    }

    /// Decoded once per process: every run on Milano shares it.
    private static let milano: Result<Network, SweepPlanError> = {
        do {
            return .success(try BundledNetworks.milano)
        } catch {
            return .failure(.network("the bundled Milano network does not decode: \(error)"))
        }
    }()
}
