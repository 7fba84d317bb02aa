import Testing
@testable import SpokesBikes

@Suite struct SimulationOptionsTests {
    let network = Network.synthetic(stations: 2, bikes: 1, emptySlots: 1)

    @Test func acceptsSensibleOptions() throws {
        try SimulationOptions(users: 10, paths: 10, goal: "station-1").validate(for: network)
    }

    @Test func refusesAnEmptyNetwork() {
        #expect(throws: SimulationError.noStations(network: "synthetic")) {
            try SimulationOptions(users: 1, paths: 1).validate(for: .synthetic(stations: 0, bikes: 1, emptySlots: 1))
        }
    }

    @Test func refusesANetworkWithoutBikes() {
        #expect(throws: SimulationError.noBikes(network: "synthetic")) {
            try SimulationOptions(users: 1, paths: 1).validate(for: .synthetic(stations: 3, bikes: 0, emptySlots: 4))
        }
    }

    @Test func refusesAGoalNotInTheNetwork() {
        let error = SimulationError.unknownGoal("nowhere", network: "synthetic")
        #expect(throws: error) { try SimulationOptions(users: 1, paths: 1, goal: "nowhere").validate(for: network) }
        #expect(error.description.contains("'nowhere'"))
    }

    @Test(arguments: [
        SimulationOptions(users: -1, paths: 1),
        SimulationOptions(users: 1, paths: -5),
        SimulationOptions(users: 2_000_000, paths: 1),
        SimulationOptions(users: 1, paths: 1, timing: MoveTiming(moveTime: -0.1)),
        SimulationOptions(users: 1, paths: 1, timing: MoveTiming(moveTime: .nan)),
        SimulationOptions(users: 1, paths: 1, timing: MoveTiming(timeScale: .infinity)),
        SimulationOptions(users: 1, paths: 1, workers: 0),
        SimulationOptions(users: 1, paths: 1, maxMovesPerUser: 0),
    ])
    func refusesNegativeOrAbsurdNumbers(_ options: SimulationOptions) {
        #expect(throws: SimulationError.self) { try options.validate(for: network) }
    }

    @Test func errorNamesTheSettingAndTheRange() {
        let error = #expect(throws: SimulationError.self) {
            try SimulationOptions(users: 1, paths: 1, timing: MoveTiming(timeScale: -1)).validate(for: network)
        }
        #expect(error?.description == "time scale is -1.0; expected a number from 0 to 1000")
    }
}
