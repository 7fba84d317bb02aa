import SpokesConcurrency

/// How long a move between stations takes, nominally and in real time.
///
/// Every move takes `moveTime` nominal seconds (the seed's 0.1 s). The user actually
/// sleeps `moveTime x timeScale` real seconds: 1 is real time, as in the original
/// project; 0 does not sleep at all. Figures such as waiting time are always reported in
/// nominal seconds, so a run at scale 0 gives the same figures as a real-time run.
public struct MoveTiming: Sendable, Hashable, Codable {
    public var moveTime: Double
    public var timeScale: Double

    public init(moveTime: Double = 0.1, timeScale: Double = 1) {
        self.moveTime = moveTime
        self.timeScale = timeScale
    }

    /// Real seconds one move sleeps.
    public var realSecondsPerMove: Double { moveTime * timeScale }

    /// Sleeps on `clock` until move `move` of a run that began at `start` (a clock
    /// reading) is due: `start + move x realSecondsPerMove`. A user's moves keep to that
    /// schedule, so the time its station calls take is part of a move's time, as a
    /// bike's ride is, and does not add up over the moves: a user in a cluster and one
    /// in one process travel alike while their stations answer within a move. A user
    /// behind its schedule (the stations were slow) moves on at once until it is back
    /// on it. Returns at once when the scale is 0 or the task is cancelled.
    func travel(on clock: any RuntimeClock, untilMove move: Int, since start: Double) async {
        let seconds = realSecondsPerMove
        guard seconds > 0 else { return }
        let wait = start + Double(move) * seconds - clock.now
        guard wait > 0 else { return }
        try? await clock.sleep(for: wait)
    }
}
