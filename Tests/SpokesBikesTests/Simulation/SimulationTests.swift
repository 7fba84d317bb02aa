import Testing
@testable import SpokesBikes

@Suite struct SimulationTests {
    /// The first four Milano stations: 37 bikes between them, Cadorna 1 with one slot.
    static func fourContendedStations() throws -> Network {
        var network = try BundledNetworks.milano
        network.stations = Array(network.stations.prefix(4))
        return network
    }

    func run(_ network: Network, _ options: SimulationOptions) async throws -> SimulationReport {
        let report = try await Simulation(network: network, options: options).run()
        #expect(report.conservation.holds, "bikes not conserved: \(report.conservation)")
        #expect(report.stations.allSatisfy { $0.freeBikes >= 0 && $0.emptySlots >= 0 })
        return report
    }

    @Test func noConflictWithOneStationAndMoreBikesThanUsers() async throws {
        let network = Network(id: "one", name: "One", stations: [
            Station(id: "only", name: "Only", freeBikes: 19, emptySlots: 1),
        ])
        let report = try await run(network, SimulationOptions(users: 18, paths: 10, seed: 1, timing: MoveTiming(timeScale: 0)))
        #expect(report.totalWaitingTime == 0)
        #expect(report.totalPaths == 180)
        #expect(report.completedUsers == 18)
        #expect(report.bikesBefore == 19 && report.bikesAfter == 19)
    }

    @Test func contendedStationsMakeUsersWait() async throws {
        let report = try await run(
            Self.fourContendedStations(), SimulationOptions(users: 50, paths: 10, seed: 3, timing: MoveTiming(timeScale: 0)))
        #expect(report.totalWaitingTime > 0)
        #expect(report.totalPaths == 500)
        #expect(report.bikesBefore == 37 && report.bikesAfter == 37)
    }

    @Test func contendedStationsWithRealInterleavingConserveBikes() async throws {
        // 1 ms real moves make the 50 users genuinely overlap at the stations.
        let timing = MoveTiming(moveTime: 0.1, timeScale: 0.01)
        let report = try await run(
            Self.fourContendedStations(), SimulationOptions(users: 50, paths: 5, seed: 4, timing: timing))
        #expect(report.totalPaths == 250)
        #expect(report.totalWaitingTime > 0)
    }

    @Test func aGoalStationCutsRunsShort() async throws {
        let network = Network.synthetic(stations: 3, bikes: 10, emptySlots: 10)
        let report = try await run(
            network, SimulationOptions(users: 20, paths: 50, goal: "station-2", seed: 5, timing: MoveTiming(timeScale: 0)))
        #expect(report.totalPaths < 20 * 50)
        #expect(report.usersReachedGoal == 20)
        #expect(report.completedUsers == 20)
    }

    @Test func sameSeedAndOneWorkerReproduceTheRun() async throws {
        let network = try Self.fourContendedStations()
        let options = SimulationOptions(users: 30, paths: 8, seed: 99, timing: MoveTiming(timeScale: 0), workers: 1)
        let first = try await run(network, options)
        let second = try await run(network, options)
        #expect(first.results == second.results)
        #expect(first.stations == second.stations)
        var other = options
        other.seed = 100
        #expect(try await run(network, other).results != first.results)
    }

    @Test func waitingTimeIsNominalWhateverTheTimeScale() async throws {
        let network = try Self.fourContendedStations()
        let instant = SimulationOptions(users: 4, paths: 3, seed: 8, timing: MoveTiming(moveTime: 0.1, timeScale: 0), workers: 1)
        var scaled = instant
        scaled.timing.timeScale = 0.005
        let a = try await run(network, instant)
        let b = try await run(network, scaled)
        #expect(a.results == b.results)
        #expect(a.totalWaitingTime == b.totalWaitingTime)
        #expect(b.wallTime > 0)
    }

    @Test func reportsProgressForEveryUser() async throws {
        let seen = ProgressLog()
        let simulation = try Simulation(
            network: .synthetic(stations: 2, bikes: 5, emptySlots: 5),
            options: SimulationOptions(users: 12, paths: 2, timing: MoveTiming(timeScale: 0)))
        let report = await simulation.run { seen.append($0) }
        #expect(seen.values.map(\.usersDone) == Array(1...12))
        #expect(seen.values.last?.pathsRidden == report.totalPaths)
    }

    @Test func cancellingStopsUsersAndStillConservesBikes() async throws {
        let simulation = try Simulation(
            network: .synthetic(stations: 4, bikes: 3, emptySlots: 3),
            options: SimulationOptions(users: 40, paths: 1_000, timing: MoveTiming(moveTime: 0.1, timeScale: 0.1)))
        let started = ProgressLog()
        let task = Task { await simulation.run { started.append($0) } }
        task.cancel()
        let report = await task.value
        #expect(report.cancelled)
        #expect(report.completedUsers < 40)
        #expect(report.conservation.holds, "\(report.conservation)")
        #expect(report.bikesAfter + report.conservation.bikesInUse == report.bikesBefore)
    }
}

/// Collects progress snapshots from the simulation's callback.
final class ProgressLog: Sendable {
    private let log = Mutex<[SimulationProgress]>([])
    func append(_ progress: SimulationProgress) { log.withLock { $0.append(progress) } }
    var values: [SimulationProgress] { log.withLock { $0 } }
}

import Synchronization
