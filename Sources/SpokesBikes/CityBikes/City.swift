/// The top level of a CityBikes network response: `{"network": {...}}`.
///
/// The name follows the original Concurrent Bikes project, where a `City` is what
/// the API returns for one city's network.
public struct City: Sendable, Hashable, Codable {
    public let network: Network

    public init(network: Network) {
        self.network = network
    }
}
