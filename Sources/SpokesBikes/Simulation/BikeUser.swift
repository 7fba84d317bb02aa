/// A person who rides and walks between stations, competing with others for bikes and
/// empty slots.
///
/// The rules are those of Concurrent Bikes:
/// - A user starts on foot and goes to a station chosen uniformly at random (the
///   same station it is at may be chosen again; every move takes the same time).
/// - Arriving on foot, it takes a bike if there is one; otherwise it moves on, and that
///   move is waiting time.
/// - Arriving by bike, it leaves the bike if there is an empty slot, which counts one
///   path; otherwise it moves on, still riding, and that move is waiting time.
/// - It stops after `paths` paths, or as soon as it leaves a bike at its goal station.
public struct BikeUser: Sendable, Hashable, Identifiable {
    public let id: Int
    /// Seeds this user's own random stream (see ``SeededGenerator``).
    public let seed: UInt64
    public let timing: MoveTiming
    /// A safety bound: a user that has made this many moves gives up, so a network
    /// that can never serve it (no bikes, no slots) cannot keep it running forever.
    public let maxMoves: Int

    public init(id: Int, seed: UInt64 = 0, timing: MoveTiming = MoveTiming(), maxMoves: Int = 1_000_000) {
        self.id = id
        self.seed = seed
        self.timing = timing
        self.maxMoves = maxMoves
    }

    /// Runs this user over `stations` until it has ridden `paths` paths or left a bike
    /// at the station whose id is `goal`.
    ///
    /// Cancelling the task ends the run at the next move, with ending `.cancelled`.
    public func runSimulation<Dock: BikeDock>(
        in stations: [Dock], paths: Int, goal: String? = nil
    ) async throws(Dock.Failure) -> SimulationResult {
        var result = SimulationResult(user: id)
        guard !stations.isEmpty, paths > 0 else { return result }
        var random = SeededGenerator(seed: seed, stream: UInt64(truncatingIfNeeded: id))
        var hasBike = false
        while result.paths < paths {
            if Task.isCancelled {
                result.ending = .cancelled
                break
            }
            if result.moves >= maxMoves {
                result.ending = .gaveUp
                break
            }
            let station = stations[random.index(below: stations.count)]
            result.moves += 1
            if !hasBike {
                if try await station.takeBike() {
                    hasBike = true
                } else {
                    result.failedTakes += 1
                }
            } else if try await station.leaveBike() {
                hasBike = false
                result.paths += 1
                if station.stationID == goal {
                    result.ending = .reachedGoal
                    break
                }
            } else {
                result.failedLeaves += 1
            }
            if result.paths < paths {
                await timing.travel()
            }
        }
        result.holdsBike = hasBike
        result.waitingTime = Double(result.failedTakes + result.failedLeaves) * timing.moveTime
        return result
    }
}
