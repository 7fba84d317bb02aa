import Foundation
import Testing
@testable import SpokesBikes

@Suite struct StationTests {
    @Test func takingABikeMovesItToAnEmptySlot() {
        var station = Station(id: "s", name: "S", freeBikes: 1, emptySlots: 0)
        let tookBike = station.takeBike()
        #expect(tookBike)
        #expect(station.freeBikes == 0)
        #expect(station.emptySlots == 1)
        let tookAnother = station.takeBike()
        #expect(!tookAnother, "no bike left to take")
        #expect(station.freeBikes == 0)
    }

    @Test func leavingABikeFillsAnEmptySlot() {
        var station = Station(id: "s", name: "S", freeBikes: 0, emptySlots: 1)
        let leftBike = station.leaveBike()
        #expect(leftBike)
        #expect(station.freeBikes == 1)
        let leftAnother = station.leaveBike()
        #expect(!leftAnother, "no slot left")
        #expect(station.emptySlots == 0)
    }

    @Test func capacityNeverChangesAndCountsStayNonNegative() {
        var station = Station(id: "s", name: "S", freeBikes: 3, emptySlots: 2)
        var random = SeededGenerator(seed: 11)
        for _ in 0..<10_000 {
            _ = random.index(below: 2) == 0 ? station.takeBike() : station.leaveBike()
            #expect(station.capacity == 5)
            #expect(station.freeBikes >= 0 && station.emptySlots >= 0)
        }
    }

    @Test func zeroCapacityStationRefusesEverything() {
        var station = Station(id: "s", name: "S", freeBikes: 0, emptySlots: 0)
        let tookBike = station.takeBike()
        #expect(!tookBike)
        let leftBike = station.leaveBike()
        #expect(!leftBike)
    }

    @Test func encodesInTheCityBikesShape() throws {
        let station = Station(id: "x", name: "X", latitude: 1.5, longitude: 2.5, freeBikes: 4, emptySlots: 6)
        let data = try JSONEncoder().encode(station)
        let decoded = try JSONDecoder().decode(Station.self, from: data)
        #expect(decoded == station)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("\"free_bikes\":4"))
        #expect(text.contains("\"empty_slots\":6"))
    }

    @Test func twiceEscapedNamesReadAsTheyMean() throws {
        #expect(Station.unescapingLiteralEscapes(#"Medaglie D\u0027Oro 1"#) == "Medaglie D'Oro 1")
        #expect(Station.unescapingLiteralEscapes(#"a\u00e8b\u0027"#) == "a\u{e8}b'")
        #expect(Station.unescapingLiteralEscapes(#"not \u12 an escape \uZZZZ"#) == #"not \u12 an escape \uZZZZ"#)
        #expect(Station.unescapingLiteralEscapes("plain") == "plain")
        let milano = try BundledNetworks.milano
        #expect(milano.stations.contains { $0.name == "Medaglie D'Oro 1" })
        #expect(!milano.stations.contains { $0.name.contains(#"\u"#) })
    }

    /// Counts past ``Station/maximumCount`` and positions off the globe are refused when
    /// read, so no sum over an accepted network can overflow (two stations near
    /// `Int.max` used to trap the simulation).
    @Test func countsAndPositionsOutOfRangeAreRefusedWhenRead() {
        func decode(bikes: String = "1", slots: String = "1", latitude: String = "45") -> Bool {
            let json = #"{"id":"a","name":"A","latitude":"# + latitude + #","longitude":9,"free_bikes":"# + bikes + #","empty_slots":"# + slots + "}"
            return (try? JSONDecoder().decode(Station.self, from: Data(json.utf8))) != nil
        }
        #expect(decode())
        #expect(decode(bikes: "1000000", slots: "1000000"))
        #expect(!decode(bikes: "1000001"))
        #expect(!decode(slots: "9223372036854775000"))
        #expect(!decode(bikes: "-1"))
        #expect(!decode(latitude: "91"))
    }
}
