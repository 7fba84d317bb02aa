import SpokesConcurrency

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
    /// `progress` resumes a user after its last acknowledged step (its random stream is
    /// advanced past the moves already made); `attempt` is passed to the stations with
    /// every move. Cancelling the task ends the run at the next move, with ending
    /// `.cancelled`. Moves take their time on `clock` (a node's runtime's, in a cluster),
    /// on a schedule from `scheduledFrom` (a reading of `clock`; nil: now): the moment the
    /// user was ready to start, so one that started late catches up (``MoveTiming``).
    public func runSimulation<Dock: BikeDock>(
        in stations: [Dock], paths: Int, goal: String? = nil,
        resumingFrom progress: UserProgress = UserProgress(), attempt: Int = 1, clock: any RuntimeClock = RealClock(),
        scheduledFrom: Double? = nil
    ) async throws(Dock.Failure) -> SimulationResult {
        var state = progress
        var ending = SimulationResult.Ending.finishedPaths
        if !stations.isEmpty, paths > 0 {
            var random = SeededGenerator(seed: seed, stream: UInt64(truncatingIfNeeded: id))
            for _ in 0..<state.moves { _ = random.index(below: stations.count) }
            // This run's moves keep to a schedule from when it was ready (``MoveTiming``).
            let start = min(scheduledFrom ?? clock.now, clock.now)
            var travelled = 0
            while !state.isFinished(paths: paths) {
                if Task.isCancelled {
                    ending = .cancelled
                    break
                }
                if state.moves >= maxMoves {
                    ending = .gaveUp
                    break
                }
                let station = stations[random.index(below: stations.count)]
                let move = Move(user: id, attempt: attempt, step: state.moves + 1)
                let succeeded = state.hasBike ? try await station.leaveBike(move) : try await station.takeBike(move)
                state.record(succeeded: succeeded, at: station.stationID, goal: goal)
                if !state.isFinished(paths: paths) {
                    travelled += 1
                    await timing.travel(on: clock, untilMove: travelled, since: start)
                }
            }
        }
        if state.reachedGoal { ending = .reachedGoal }
        return SimulationResult(user: id, progress: state, ending: ending, moveTime: timing.moveTime)
    }
}
