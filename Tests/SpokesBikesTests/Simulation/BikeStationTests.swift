import Testing
@testable import SpokesBikes

@Suite struct BikeStationTests {
    @Test func concurrentTakesNeverTakeMoreBikesThanThereAre() async {
        let station = BikeStation(Station(id: "s", name: "S", freeBikes: 10, emptySlots: 5))
        let taken = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<1_000 { group.addTask { await station.takeBike(Move(user: 0, attempt: 1, step: 1)) } }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(taken == 10)
        let state = await station.state
        #expect(state.freeBikes == 0)
        #expect(state.emptySlots == 15)
    }

    @Test func concurrentTakesAndLeavesKeepCapacity() async {
        let station = BikeStation(Station(id: "s", name: "S", freeBikes: 3, emptySlots: 3))
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<2_000 {
                group.addTask { let move = Move(user: index, attempt: 1, step: 1)
                    _ = index.isMultiple(of: 2) ? await station.takeBike(move) : await station.leaveBike(move) }
            }
        }
        let state = await station.state
        #expect(state.capacity == 6)
        #expect(state.freeBikes >= 0 && state.emptySlots >= 0)
    }
}
