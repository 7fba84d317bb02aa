/// Why a simulation cannot start. Each message names the setting at fault and what
/// would be accepted.
public enum SimulationError: Error, Sendable, Equatable, CustomStringConvertible {
    case noStations(network: String)
    case noBikes(network: String)
    case unknownGoal(String, network: String)
    case invalidSetting(name: String, value: String, expected: String)

    public var description: String {
        switch self {
        case .noStations(let network):
            "network '\(network)' has no stations: there is nothing to simulate"
        case .noBikes(let network):
            "network '\(network)' has no free bikes at any station: no user could ever ride"
        case .unknownGoal(let goal, let network):
            "goal station '\(goal)' is not in network '\(network)' (give a station id from the network file)"
        case .invalidSetting(let name, let value, let expected):
            "\(name) is \(value); expected \(expected)"
        }
    }
}
