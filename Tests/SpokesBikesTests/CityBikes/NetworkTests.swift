import Foundation
import Testing
@testable import SpokesBikes

@Suite struct NetworkTests {
    @Test func decodesTheMilanoSnapshot() async throws {
        let city = try await Service<City>.file(at: TestData.milanoPath).get()
        #expect(city.network.id == "bikemi")
        #expect(city.network.name == "BikeMi")
        #expect(city.network.company == ["ClearChannel"])
        #expect(city.network.location?.city == "Milano")
        #expect(city.network.stations.count == 318)
        #expect(city.network.totalFreeBikes == 4_903)
        #expect(city.network.totalEmptySlots == 4_103)
        #expect(city.network.stationsWithNullCounts == 0)
    }

    @Test func firstMilanoStationIsDuomo() throws {
        let network = try BundledNetworks.milano
        let duomo = try #require(network.stations.first)
        #expect(duomo.name == "Duomo")
        #expect(duomo.id == "b5262607c8a44db673b2f9acd3ddeede")
        #expect(duomo.emptySlots == 28)
        #expect(duomo.freeBikes == 2)
        #expect(duomo.latitude == 45.464683238626)
        #expect(duomo.longitude == 9.18879747390747)
    }

    @Test func namesTheSourceEscapedTwiceReadAsTheyMean() throws {
        // The file holds "Medaglie D\\u0027Oro 2": the escape itself escaped.
        let network = try BundledNetworks.milano
        #expect(network.stations[65].name == "Medaglie D'Oro 2")
        #expect(network.stations[65].emptySlots == 0)
    }

    @Test func nullCountsDecodeAsZeroAndAreCounted() async throws {
        let json = """
        {"network": {"id": "n", "name": "N", "company": "Solo Bikes", "extra_field": {"x": [1, 2]},
          "stations": [
            {"id": "a", "name": "A", "latitude": 1, "longitude": 2, "free_bikes": null, "empty_slots": 5, "extra": {"uid": 9}},
            {"id": "b", "name": "B", "latitude": 1, "longitude": 2, "free_bikes": 3, "empty_slots": null},
            {"id": "c", "name": "C", "latitude": 1, "longitude": 2, "free_bikes": 3},
            {"id": "d", "name": "D", "latitude": 1, "longitude": 2, "free_bikes": 1, "empty_slots": 1}
          ]}}
        """
        let network = try await Service<City>.data(Data(json.utf8), source: "test").get().network
        #expect(network.company == ["Solo Bikes"])
        #expect(network.stations.map(\.freeBikes) == [0, 3, 3, 1])
        #expect(network.stations.map(\.emptySlots) == [5, 0, 0, 1])
        #expect(network.stationsWithNullCounts == 3)
    }

    @Test func syntheticNetworkHasIdenticalStations() {
        let network = Network.synthetic(stations: 3, bikes: 4, emptySlots: 2)
        #expect(network.stations.map(\.id) == ["station-1", "station-2", "station-3"])
        #expect(network.totalFreeBikes == 12)
        #expect(network.totalEmptySlots == 6)
    }
}

