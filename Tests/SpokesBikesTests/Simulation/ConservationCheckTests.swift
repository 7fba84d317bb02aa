import Testing
@testable import SpokesBikes

@Suite struct ConservationCheckTests {
    let before = [Station(id: "a", name: "A", freeBikes: 2, emptySlots: 1), Station(id: "b", name: "B", freeBikes: 0, emptySlots: 3)]

    @Test func holdsWhenBikesOnlyMoved() {
        let after = [Station(id: "a", name: "A", freeBikes: 0, emptySlots: 3), Station(id: "b", name: "B", freeBikes: 2, emptySlots: 1)]
        #expect(ConservationCheck(before: before, after: after, bikesInUse: 0).holds)
    }

    @Test func countsBikesStillRidden() {
        let after = [Station(id: "a", name: "A", freeBikes: 1, emptySlots: 2), before[1]]
        #expect(!ConservationCheck(before: before, after: after, bikesInUse: 0).holds)
        #expect(ConservationCheck(before: before, after: after, bikesInUse: 1).holds)
    }

    @Test func failsWhenAStationChangesCapacity() {
        let after = [Station(id: "a", name: "A", freeBikes: 2, emptySlots: 5), before[1]]
        let check = ConservationCheck(before: before, after: after, bikesInUse: 0)
        #expect(!check.holds)
        #expect(check.violations == ["station a capacity changed from 3 to 7"])
    }

    @Test func encodesItsVerdict() throws {
        let data = try JSONEncoder().encode(ConservationCheck(before: before, after: before, bikesInUse: 0))
        #expect(String(decoding: data, as: UTF8.self).contains("\"holds\":true"))
    }
}

import Foundation
