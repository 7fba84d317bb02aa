import SpokesCluster
import SpokesClusterTestKit
import SpokesConcurrency
import SpokesTestKit
import Synchronization
import Testing
@testable import SpokesBikes

/// Moves in batches (issue 33 §1): a worker's ``MoveBatcher`` sends many users' moves to
/// the coordinator's ``JobStationDesk`` in one call, on a simulated network in virtual
/// time. Each move is applied in order and as a call of its own would be: idempotent,
/// fenced, refused alone.
@Suite(.simulated, .hangGuard)
struct JobStationDeskTests {
    /// Two nodes; a desk on n0 over a recording ledger of `users` and `stations`, reached from n1.
    struct Setup {
        let cluster: SimulatedCluster
        let ledger: JobLedger
        let desk: JobStationDesk

        init(users: Int, stations: [Station]) async throws {
            cluster = try SimulatedCluster(2)
            try await cluster.awaitMesh()
            ledger = JobLedger(book: BikeJobBook(users: users, stations: stations), recording: true)
            let ledger = ledger
            let coordinator = cluster[0].system
            let hosted = ClusterSystem.withWellKnownName(JobStationDesk.name(job: "j")) {
                JobStationDesk(actorSystem: coordinator, ledger: ledger)
            }
            cluster.keep(hosted)
            desk = try JobStationDesk.resolve(id: hosted.id, using: cluster[1].system)
        }

        func apply(_ moves: [StationMove]) async throws -> [StationMove.Outcome] {
            let desk = desk
            return try await cluster.complete("a batch of \(moves.count) moves", within: 5) { try await desk.apply(moves) }
        }
    }

    static func station(_ id: String, bikes: Int, slots: Int) -> Station {
        Station(id: id, name: id, freeBikes: bikes, emptySlots: slots)
    }

    static func take(_ user: Int, at station: Int, attempt: Int = 1, step: Int = 1) -> StationMove {
        StationMove(station: station, take: true, move: Move(user: user, attempt: attempt, step: step))
    }

    static func leave(_ user: Int, at station: Int, attempt: Int = 1, step: Int = 2) -> StationMove {
        StationMove(station: station, take: false, move: Move(user: user, attempt: attempt, step: step))
    }

    @Test func aBatchIsAppliedInItsOrderAndARepeatChangesNothing() async throws {
        let setup = try await Setup(users: 3, stations: [Self.station("a", bikes: 1, slots: 0), Self.station("b", bikes: 0, slots: 1)])
        defer { setup.cluster.stop() }
        for user in 0..<3 { _ = setup.ledger.beginAttempt(user: user, attempt: 1) }
        // One bike at a: the first in the batch gets it. Each user's one move a batch is
        // what a worker sends (a user waits for its move's outcome before the next).
        let batch = [Self.take(2, at: 0), Self.take(0, at: 0), Self.take(1, at: 0)]
        #expect(try await setup.apply(batch) == [.done(true), .done(false), .done(false)])
        let outcomes = try await setup.apply([Self.leave(2, at: 1), Self.take(0, at: 1, step: 2), Self.take(1, at: 0, step: 2)])
        #expect(outcomes == [.done(true), .done(true), .done(false)], "user 2 leaves its bike at b, then user 0 takes it")
        let book = setup.ledger.book
        #expect(book.stations.map(\.freeBikes) == [0, 0] && book.stations.map(\.emptySlots) == [1, 1])
        let events = setup.ledger.eventsMade
        let again = try await setup.apply([Self.leave(2, at: 1), Self.take(0, at: 1, step: 2), Self.take(1, at: 0, step: 2)])
        #expect(again == outcomes, "a repeat answers with the recorded outcomes")
        #expect(setup.ledger.book == book, "and changes nothing")
        #expect(setup.ledger.eventsMade == events, "nor records anything to replicate")
        #expect(book.entries.filter(\.progress.hasBike).count == 1, "the one bike is conserved: user 0 rides it")
    }

    @Test func aFencedAttemptsMovesAreRefusedOneByOne() async throws {
        let setup = try await Setup(users: 2, stations: [Self.station("a", bikes: 4, slots: 4)])
        defer { setup.cluster.stop() }
        for user in 0..<2 { _ = setup.ledger.beginAttempt(user: user, attempt: 1) }
        _ = setup.ledger.beginAttempt(user: 0, attempt: 2)
        let outcomes = try await setup.apply([Self.take(0, at: 0, attempt: 1), Self.take(1, at: 0), Self.take(0, at: 0, attempt: 2), Self.take(1, at: 0, step: 3)])
        #expect(outcomes == [
            .refused(.staleAttempt(user: 0, attempt: 1, current: 2)), .done(true), .done(true), .refused(.outOfOrder(user: 1, step: 3, expected: 2)),
        ])
        #expect(setup.ledger.book.stations[0].freeBikes == 2, "only the two current moves took bikes")
        let overfull = Array(repeating: Self.take(1, at: 0), count: JobStationDesk.movesPerCall + 1)
        await #expect(throws: RemoteCallError.self, "a batch over the limit is refused whole") { _ = try await setup.apply(overfull) }
        #expect(try await setup.apply([Self.take(0, at: 7, attempt: 2, step: 2)]) == [.refused(.outOfOrder(user: 0, step: 2, expected: 0))], "no station 7")
    }

    @Test func aLoneMoveGoesAtOnceAndMovesThatGatherGoTogether() async throws {
        let setup = try await Setup(users: 40, stations: [Self.station("a", bikes: 30, slots: 10)])
        defer { setup.cluster.stop() }
        for user in 0..<40 { _ = setup.ledger.beginAttempt(user: user, attempt: 1) }
        setup.cluster.network.delay(from: nil, by: 0.01...0.01)
        let batcher = MoveBatcher(desk: setup.desk)
        let clock = setup.cluster.clock
        let start = clock.now
        let took = try await setup.cluster.complete("a lone move", within: 5, step: 0.001) { try await batcher.send(Self.take(0, at: 0)) }
        #expect(took)
        #expect(clock.now - start < 0.025, "one round trip of 0.02 s, no wait for a tick: \(clock.now - start) s")
        #expect(batcher.sent == MoveBatcher.Sent(calls: 1, moves: 1))

        // 39 users at once: the first goes alone, the rest gather behind it.
        let outcomes = try await setup.cluster.complete("39 moves", within: 5, step: 0.001) {
            try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
                for user in 1..<40 { group.addTask { (user, try await batcher.send(Self.take(user, at: 0))) } }
                return try await group.reduce(into: [Int: Bool]()) { $0[$1.0] = $1.1 }
            }
        }
        #expect(outcomes.count == 39 && outcomes.values.filter { $0 }.count == 29, "30 bikes for 40 users")
        #expect(batcher.sent.moves == 40 && batcher.sent.calls <= 4, "\(batcher.sent)")
        let book = setup.ledger.book
        #expect(book.stations[0].freeBikes == 0 && book.entries.filter(\.progress.hasBike).count == 30, "bikes conserved")

        // A refusal reaches its user alone, as the error a call of its own throws.
        _ = setup.ledger.beginAttempt(user: 0, attempt: 2)
        await #expect(throws: RemoteCallError.remoteError(type: "Refusal", message: "user 0: attempt 1 was fenced off by attempt 2", node: "n0")) {
            try await setup.cluster.complete("a fenced move", within: 5) { try await batcher.send(Self.leave(0, at: 0)) }
        }
    }

    /// A user whose input says nothing of a desk (from a coordinator of an earlier
    /// release, which hosts stations only) calls each station; one whose input says there
    /// is a desk sends there, and fails where there is none.
    @Test func theCoordinatorsInputChoosesBatchesOrACallPerMove() async throws {
        let cluster = try SimulatedCluster(2)
        defer { cluster.stop() }
        try await cluster.awaitMesh()
        let network = try BikeJobTests.contendedNetwork()
        let ledger = JobLedger(book: BikeJobBook(users: 2, stations: network.stations), recording: false)
        let coordinator = cluster[0].system
        for index in network.stations.indices {
            cluster.keep(ClusterSystem.withWellKnownName(JobStation.name(job: "old", index: index)) {
                JobStation(actorSystem: coordinator, index: index, ledger: ledger)
            })
        }
        func input(user: Int, batches: Bool?) -> BikeUserTask.Input {
            _ = ledger.beginAttempt(user: user, attempt: 1)
            return BikeUserTask.Input(
                job: "old", coordinator: coordinator.node, epoch: 0, stationCount: network.stations.count, goalIndex: nil, user: user,
                paths: 3, seed: 1, timing: MoveTiming(timeScale: 0), maxMoves: 1_000, attempt: 1, progress: UserProgress(), batchesMoves: batches)
        }
        let context = TaskContext(system: cluster[1].system, job: "old", task: 0, attempt: 1)
        let old = input(user: 0, batches: nil)
        let result = try await cluster.complete("a user of an earlier coordinator", within: 10) { try await BikeUserTask().run(old, context: context) }
        #expect(result.ending == .finishedPaths && ledger.progress(user: 0).moves == result.moves && result.moves > 0)
        let batched = input(user: 1, batches: true)
        await #expect(throws: RemoteCallError.self, "no desk under the job's name") {
            try await cluster.complete("a batching user without a desk", within: 10) { try await BikeUserTask().run(batched, context: context) }
        }
        #expect(ledger.progress(user: 1).moves == 0)
    }

    @Test func aJobOnThreeNodesMovesInBatchesAndConservesItsBikes() async throws {
        let cluster = try SimulatedCluster(3, configure: { $1.slots = 8 }, registry: { _ in TaskRegistry(kinds: BikeKinds.all) })
        defer { cluster.stop() }
        try await cluster.awaitMesh()
        cluster.network.delay(from: nil, by: 0.001...0.003)
        let job = BikeJob(network: try BikeJobTests.contendedNetwork(), options: SimulationOptions(users: 24, paths: 4, seed: 5, timing: MoveTiming(moveTime: 0.2, timeScale: 1)))
        let coordinator = cluster[0]
        let report = try await cluster.complete("the job", within: 120) { try await job.run(on: coordinator) }
        #expect(report.completedUsers == 24 && report.results.map(\.user) == Array(0..<24))
        #expect(report.conservation.holds, "\(report.conservation)")
        // n1's and n2's users moved only through the desk (their input says it is there):
        // none failed, so their batches reached it.
        #expect(Set(report.tasksPerNode?.keys ?? [:].keys).count == 3, "users ran on every node: \(report.tasksPerNode ?? [:])")
        #expect(report.retries == 0 && report.failedUsers == [], "\(report.failedUsers ?? [])")
    }
}
