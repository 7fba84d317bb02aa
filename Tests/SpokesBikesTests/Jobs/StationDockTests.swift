import SpokesCluster
import SpokesClusterTestKit
import SpokesTestKit
import Testing
@testable import SpokesBikes

/// A user's handle on its job's stations where it cannot batch (on the coordinator
/// itself): each station is found when a move reaches it, not every station of the
/// network for every user at its start.
@Suite(.simulated, .hangGuard)
struct StationDockTests {
    @Test func aStationIsFoundWhenAMoveReachesItAndAMissingOneSaysSo() async throws {
        let cluster = try SimulatedCluster(1)
        defer { cluster.stop() }
        let system = cluster[0].system
        let ledger = JobLedger(book: BikeJobBook(users: 1, stations: [
            Station(id: "a", name: "a", freeBikes: 1, emptySlots: 0), Station(id: "b", name: "b", freeBikes: 1, emptySlots: 1),
        ]), recording: false)
        // Only station 1 is hosted, under the first coordinator's name.
        cluster.keep(ClusterSystem.withWellKnownName(JobStation.name(job: "j", index: 1)) {
            JobStation(actorSystem: system, index: 1, ledger: ledger)
        })
        _ = ledger.beginAttempt(user: 0, attempt: 1)
        let finder = JobStationFinder(system: system, coordinator: system.node, job: "j", epoch: 0)
        // Making the docks finds nothing yet, so the missing station costs nothing here.
        let docks = (0..<2).map { StationDock(index: $0, finder: finder) }
        #expect(docks.map(\.stationID) == ["0", "1"])
        #expect(try await docks[1].takeBike(Move(user: 0, attempt: 1, step: 1)))
        #expect(ledger.station(1).freeBikes == 0)
        await #expect(throws: RemoteCallError.self) { try await docks[0].leaveBike(Move(user: 0, attempt: 1, step: 2)) }
        // Another epoch's names: none of them here.
        let later = JobStationFinder(system: system, coordinator: system.node, job: "j", epoch: 1)
        await #expect(throws: RemoteCallError.self) { try await StationDock(index: 1, finder: later).leaveBike(Move(user: 0, attempt: 1, step: 2)) }
    }
}
