import FoundationEssentials
import SpokesConcurrency

/// A bike-share simulation in one process: one ``BikeStation`` actor per station and one
/// task per user, all competing for the same bikes and slots.
///
/// ```swift
/// let simulation = try Simulation(network: BundledNetworks.milano,
///                                 options: SimulationOptions(users: 100, paths: 10, seed: 7))
/// let report = await simulation.run()
/// assert(report.conservation.holds)
/// ```
public struct Simulation: Sendable {
    public let network: Network
    public let options: SimulationOptions

    /// Validates `options` against `network`; throws a ``SimulationError`` naming the
    /// first problem.
    public init(network: Network, options: SimulationOptions) throws(SimulationError) {
        try options.validate(for: network)
        self.network = network
        self.options = options
    }

    /// Runs every user to the end and reports. At most `options.workers` users run at
    /// once. Cancelling the calling task stops the users at their next move and still
    /// returns a report (with `cancelled` set) whose conservation check holds.
    ///
    /// `onProgress` is called from the collecting task after each user finishes. Moves
    /// take their time on `clock`, and the report's wall time is measured on it: the
    /// machine's by default, a node's runtime's in a task (a simulated node's is virtual).
    public func run(clock: any RuntimeClock = RealClock(), onProgress: (@Sendable (SimulationProgress) -> Void)? = nil) async -> SimulationReport {
        let stations = network.stations.map(BikeStation.init)
        let start = clock.now
        let users = (0..<options.users).map { number in
            BikeUser(id: number, seed: options.seed, timing: options.timing, maxMoves: options.maxMovesPerUser)
        }
        let inFlight = min(options.workers ?? options.users, options.users)
        let paths = options.paths
        let goal = options.goal

        var results: [SimulationResult] = []
        results.reserveCapacity(users.count)
        await withTaskGroup(of: SimulationResult.self) { group in
            var pending = users.makeIterator()
            for _ in 0..<inFlight {
                guard let user = pending.next() else { break }
                // The first users were all ready at the run's start (a user that waits
                // for a worker is ready when it gets one, as in a cluster: ``TaskContext/readySince``).
                group.addTask { await user.runSimulation(in: stations, paths: paths, goal: goal, clock: clock, scheduledFrom: start) }
            }
            var pathsRidden = 0
            for await result in group {
                results.append(result)
                pathsRidden += result.paths
                if let user = pending.next() {
                    group.addTask { await user.runSimulation(in: stations, paths: paths, goal: goal, clock: clock) }
                }
                onProgress?(SimulationProgress(
                    usersDone: results.count, usersTotal: users.count, pathsRidden: pathsRidden,
                    elapsed: clock.now - start))
            }
        }
        var finalStations: [Station] = []
        for station in stations {
            finalStations.append(await station.state)
        }
        let cancelled = Task.isCancelled || results.contains { $0.ending == .cancelled }
        return SimulationReport(
            network: network, finalStations: finalStations, options: options, results: results,
            wallTime: clock.now - start, cancelled: cancelled, finished: Date(timeIntervalSince1970: clock.unixNow))
    }
}

extension Duration {
    /// The duration in seconds, as a Double.
    public var seconds: Double {
        let (whole, fraction) = components
        return Double(whole) + Double(fraction) / 1e18
    }
}
