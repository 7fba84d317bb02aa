import SpokesConcurrency
import Synchronization
import Testing
@testable import SpokesBikes

/// A dock that answers from a script, to check the user's rules one arrival at a time.
final class ScriptedDock: BikeDock {
    typealias Failure = Never
    let stationID: String
    private let answers: Mutex<(takes: [Bool], leaves: [Bool], calls: [String], moves: [Move])>

    init(id: String = "scripted", takes: [Bool], leaves: [Bool]) {
        stationID = id
        answers = Mutex((takes, leaves, [], []))
    }

    func takeBike(_ move: Move) -> Bool {
        answers.withLock { state in
            state.calls.append("take")
            state.moves.append(move)
            return state.takes.isEmpty ? true : state.takes.removeFirst()
        }
    }

    func leaveBike(_ move: Move) -> Bool {
        answers.withLock { state in
            state.calls.append("leave")
            state.moves.append(move)
            return state.leaves.isEmpty ? true : state.leaves.removeFirst()
        }
    }

    var calls: [String] { answers.withLock { $0.calls } }
    var moves: [Move] { answers.withLock { $0.moves } }
}

@Suite struct BikeUserTests {
    let instant = MoveTiming(moveTime: 0.1, timeScale: 0)

    @Test func startsOnFootAndAlternatesTakeAndLeave() async {
        let dock = ScriptedDock(takes: [], leaves: [])
        let result = await BikeUser(id: 0, timing: instant).runSimulation(in: [dock], paths: 2)
        #expect(dock.calls == ["take", "leave", "take", "leave"])
        #expect(result.paths == 2)
        #expect(result.moves == 4)
        #expect(result.waitingTime == 0)
        #expect(result.ending == .finishedPaths)
        #expect(!result.holdsBike)
    }

    @Test func eachFailedArrivalIsOneMoveOfWaitingTime() async {
        let dock = ScriptedDock(takes: [false, false, true], leaves: [false, true])
        let result = await BikeUser(id: 0, timing: instant).runSimulation(in: [dock], paths: 1)
        #expect(dock.calls == ["take", "take", "take", "leave", "leave"])
        #expect(result.failedTakes == 2)
        #expect(result.failedLeaves == 1)
        #expect(result.waitingTime == 3 * 0.1)
        #expect(result.paths == 1)
    }

    @Test func leavingABikeAtTheGoalEndsTheRun() async {
        let goal = ScriptedDock(id: "goal", takes: [], leaves: [])
        let result = await BikeUser(id: 0, timing: instant).runSimulation(in: [goal], paths: 10, goal: "goal")
        #expect(result.paths == 1)
        #expect(result.ending == .reachedGoal)
    }

    @Test func givesUpAfterMaxMovesStillHoldingItsBike() async {
        let dock = ScriptedDock(takes: [true], leaves: Array(repeating: false, count: 10))
        let result = await BikeUser(id: 0, timing: instant, maxMoves: 5).runSimulation(in: [dock], paths: 3)
        #expect(result.ending == .gaveUp)
        #expect(result.moves == 5)
        #expect(result.holdsBike)
        #expect(!result.completed)
    }

    @Test func noStationsOrNoPathsMeansNoMoves() async {
        let none: [BikeStation] = []
        #expect(await BikeUser(id: 0).runSimulation(in: none, paths: 5).moves == 0)
        #expect(await BikeUser(id: 0).runSimulation(in: [ScriptedDock(takes: [], leaves: [])], paths: 0).moves == 0)
    }

    @Test func everyMoveNamesTheUserAttemptAndStep() async {
        let dock = ScriptedDock(takes: [false, true], leaves: [])
        _ = await BikeUser(id: 7, timing: instant).runSimulation(in: [dock], paths: 1, attempt: 2)
        #expect(dock.moves == [Move(user: 7, attempt: 2, step: 1), Move(user: 7, attempt: 2, step: 2), Move(user: 7, attempt: 2, step: 3)])
    }

    @Test func aResumedUserContinuesAfterItsLastStepWithTheSameRandomChoices() async throws {
        let stations = (0..<5).map { ScriptedDock(id: "s\($0)", takes: [], leaves: []) }
        let user = BikeUser(id: 3, seed: 11, timing: instant)
        let whole = await user.runSimulation(in: stations, paths: 4)
        let wholeVisits = stations.flatMap { station in station.moves.map { ($0.step, station.stationID) } }.sorted { $0.0 < $1.0 }.map(\.1)

        let again = (0..<5).map { ScriptedDock(id: "s\($0)", takes: [], leaves: []) }
        var progress = UserProgress()
        progress.record(succeeded: true, at: wholeVisits[0], goal: nil)
        progress.record(succeeded: true, at: wholeVisits[1], goal: nil)
        let resumed = await user.runSimulation(in: again, paths: 4, resumingFrom: progress, attempt: 2)
        let resumedVisits = again.flatMap { station in station.moves.map { ($0.step, station.stationID) } }.sorted { $0.0 < $1.0 }
        #expect(resumedVisits.first?.0 == 3, "resumes at step 3")
        #expect(resumedVisits.map(\.1) == Array(wholeVisits.dropFirst(2)), "the same stations as the uninterrupted run")
        #expect(resumed == whole)
    }

    @Test func aCancelledUserStopsAtItsNextMove() async {
        let dock = ScriptedDock(takes: [], leaves: [])
        let task = Task { await BikeUser(id: 0, timing: MoveTiming(moveTime: 60, timeScale: 1)).runSimulation(in: [dock], paths: 100) }
        task.cancel()
        let result = await task.value
        #expect(result.ending == .cancelled)
        #expect(result.paths < 100)
    }

    /// When each of a user's moves reaches its station, on a virtual clock, where every
    /// station call takes `callSeconds` of it; the test moves the clock from one sleeper's
    /// deadline to the next.
    /// `readyAgo`: the user was ready that long before it started (its schedule's origin).
    private static func arrivals(moveTime: Double, callSeconds: Double, paths: Int, readyAgo: Double = 0) async throws -> [Double] {
        let clock = VirtualClock()
        let dock = SlowDock(clock: clock, callSeconds: callSeconds)
        let user = Task {
            await BikeUser(id: 0, timing: MoveTiming(moveTime: moveTime, timeScale: 1)).runSimulation(
                in: [dock], paths: paths, clock: clock, scheduledFrom: clock.now - readyAgo)
        }
        let finished = Task { _ = await user.value; return true }
        let done = Mutex(false)
        Task { _ = await finished.value; done.withLock { $0 = true } }
        // One task sleeps at a time (the user, or its station call): wake it when due.
        for _ in 0..<1_000 where !done.withLock({ $0 }) {
            for _ in 0..<100_000 where clock.sleepers == 0 && !done.withLock({ $0 }) { await Task.yield() }
            if let deadline = clock.nextDeadline { _ = clock.advance(by: max(0, deadline - clock.now)) }
        }
        _ = await user.value
        return dock.arrivals
    }

    @Test func aUsersMovesKeepToTheirScheduleWhenStationCallsTakeTime() async throws {
        // A move every 0.2 s from the start, though each call takes 0.05 s of it: the
        // calls' time does not add up over the moves (a user in a cluster travels as one
        // in one process while its stations answer within a move).
        let arrivals = try await Self.arrivals(moveTime: 0.2, callSeconds: 0.05, paths: 2)
        #expect(arrivals.map { ($0 * 1000).rounded() / 1000 } == [0, 0.2, 0.4, 0.6])
    }

    @Test func aUserThatStartedLateKeepsToTheScheduleOfWhenItWasReady() async throws {
        // Ready 0.3 s before it started (its coordinator was slow to send it): moves 1
        // and 2 were due already, so it makes them at once; move 3 is due 0.9 s after it
        // was ready, as if it had started then.
        let arrivals = try await Self.arrivals(moveTime: 0.2, callSeconds: 0.05, paths: 2, readyAgo: 0.3)
        #expect(arrivals.map { ($0 * 1000).rounded() / 1000 } == [0, 0.05, 0.1, 0.3])
    }

    @Test func aUserBehindItsScheduleMovesOnAtOnce() async throws {
        // Each call takes longer than a move: no sleep between them, and no more than
        // the calls' own time in all.
        let arrivals = try await Self.arrivals(moveTime: 0.2, callSeconds: 0.5, paths: 2)
        #expect(arrivals.map { ($0 * 1000).rounded() / 1000 } == [0, 0.5, 1.0, 1.5])
    }
}

/// A dock whose every call takes `callSeconds` on `clock` (a station on another node,
/// or a slow one), recording when each call began.
final class SlowDock: BikeDock {
    typealias Failure = Never
    let stationID = "slow"
    private let clock: VirtualClock
    private let callSeconds: Double
    private let began = Mutex<[Double]>([])

    init(clock: VirtualClock, callSeconds: Double) {
        self.clock = clock
        self.callSeconds = callSeconds
    }

    func takeBike(_ move: Move) async -> Bool { await call() }
    func leaveBike(_ move: Move) async -> Bool { await call() }

    private func call() async -> Bool {
        let now = clock.now
        began.withLock { $0.append(now) }
        try? await clock.sleep(for: callSeconds)
        return true
    }

    var arrivals: [Double] { began.withLock { $0 } }
}
