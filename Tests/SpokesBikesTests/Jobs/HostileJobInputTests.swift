import SpokesTestKit
import Distributed
import Foundation
import Synchronization
import SpokesCluster
import SpokesJobs
import SpokesConcurrency
import Testing
@testable import SpokesBikes

/// Numbers no node should accept, in every numeric field of what a peer hands a bike
/// node: a job to submit, a batch, a `bikes.user` task's input, a station's move and a
/// progress report. Each must get an error the peer can read, and the node must still
/// run jobs afterwards. (Values JSON cannot carry, and values of the wrong type, fail to
/// decode for any call: `HostileInputTests` sends those.)
@Suite(.processLane, .timeLimit(.minutes(2)), .serialized)
struct HostileJobInputTests {
    /// A started node with its job desk, and a client that calls it.
    final class Target: Sendable {
        let node: ClusterNode
        let jobs: JobService
        let bikes: BikeJobService
        let client: ClusterSystem

        init() async throws {
            var settings = ClusterSettings()
            settings.cluster = "hostile-jobs-\(UUID().uuidString.prefix(8))"
            settings.nodeName = "desk"
            settings.discoveryMode = .off
            settings.dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("spokes-hostile-\(UUID())").path
            let registry = TaskRegistry()
            registry.register(BikeUserTask())
            let node = try ClusterNode(settings: settings, registry: registry)
            node.start()
            TaskJobs.host(on: node)
            self.node = node
            (jobs, bikes) = await BikeJobService.hostDesks(on: node)
            var clientSettings = settings
            clientSettings.nodeName = "client"
            client = try ClusterSystem(settings: clientSettings, isMember: false)
            try await client.join(node.system.address)
        }

        func remote<Act: DistributedActor>(_ type: Act.Type, _ name: String) throws -> Act where Act.ActorSystem == ClusterSystem {
            try Act.resolve(id: ActorID(node: node.system.node, name: name), using: client)
        }

        /// The node still runs a batch and a small bike job to the end.
        func expectServing(after what: String) async throws {
            let desk = try remote(BikeJobService.self, BikeJobService.wellKnownName)
            let batch = try await remote(TaskJobs.self, TaskJobs.wellKnownName).runBatch(kind: NoopTask.name, input: "0", count: 2, deadline: 5, retries: 0)
            #expect(batch.succeeded == 2, "a batch after \(what)")
            let report = try await desk.submit(BikeJob(network: HostileJobInputTests.network, options: HostileJobInputTests.options), listener: nil)
            #expect(report.completedUsers == 2 && report.conservation.holds, "a job after \(what)")
        }

        func stop() {
            client.shutdown()
            node.stop()
            try? FileManager.default.removeItem(atPath: (node.settings.dataDirectory as NSString).expandingTildeInPath)
        }
    }

    static let network = Network(id: "tiny", name: "Tiny", stations: [
        Station(id: "a", name: "A", latitude: 45, longitude: 9, freeBikes: 2, emptySlots: 2),
        Station(id: "b", name: "B", latitude: 45.1, longitude: 9.1, freeBikes: 2, emptySlots: 2),
    ])
    static let options = SimulationOptions(users: 2, paths: 1, seed: 1, timing: MoveTiming(timeScale: 0))
    static let hugeDoubles: [Double] = [1e300, -1e300, .greatestFiniteMagnitude, 1e21, -1]
    static let hugeIntegers: [Int] = [Int.max, Int.min, -1]

    /// Calls `call` and expects a refusal naming `words`; true if it was refused.
    static func expectRefusal(_ what: String, naming words: String, _ call: () async throws -> Void) async {
        do {
            try await call()
            Issue.record("\(what) was accepted")
        } catch {
            #expect("\(error)".contains(words), "\(what): \(error)")
        }
    }

    @Test func aSubmittedJobWithNumbersOutOfRangeIsRefusedWithTheField() async throws {
        let target = try await Target()
        defer { target.stop() }
        let desk = try target.remote(BikeJobService.self, BikeJobService.wellKnownName)
        var variants: [(String, String, BikeJob)] = []
        func job(_ change: (inout BikeJob) -> Void) -> BikeJob {
            var job = BikeJob(network: Self.network, options: Self.options)
            change(&job)
            return job
        }
        for value in Self.hugeDoubles + [0] { variants.append(("deadline \(value)", "deadline", job { $0.deadline = value })) }
        for value in Self.hugeIntegers + [101] { variants.append(("retries \(value)", "retries", job { $0.retries = value })) }
        for value in Self.hugeIntegers {
            variants.append(("users \(value)", "users", job { $0.options.users = value }))
            variants.append(("paths \(value)", "paths", job { $0.options.paths = value }))
            variants.append(("workers \(value)", "workers", job { $0.options.workers = value }))
            variants.append(("max moves \(value)", "max moves", job { $0.options.maxMovesPerUser = value == Int.max ? 0 : value }))
            let counts = [Station(id: "a", name: "A", freeBikes: value, emptySlots: 1), Station(id: "b", name: "B", freeBikes: 1, emptySlots: value)]
            if value > 0 { variants.append(("station counts \(value)", "stations[0].free_bikes", job { $0.network.stations = counts })) }
        }
        for value in Self.hugeDoubles where value != 1e21 {
            variants.append(("move time \(value)", "move time", job { $0.options.timing.moveTime = value }))
            variants.append(("time scale \(value)", "time scale", job { $0.options.timing.timeScale = value }))
        }
        for value in [1e300, -1e300, 90.5, -1000] {
            let far = [Station(id: "a", name: "A", latitude: value, longitude: 9, freeBikes: 2, emptySlots: 2)]
            variants.append(("latitude \(value)", "latitude", job { $0.network.stations = far }))
        }
        for (what, words, hostile) in variants {
            await Self.expectRefusal("a job with \(what)", naming: words) { _ = try await desk.submit(hostile, listener: nil) }
        }
        #expect(target.node.counters.completed == 0, "no refused job ran a task")
        try await target.expectServing(after: "hostile jobs")
    }

    @Test func aBatchWithADeadlineOrRetriesOutOfRangeIsRefused() async throws {
        let target = try await Target()
        defer { target.stop() }
        let desk = try target.remote(TaskJobs.self, TaskJobs.wellKnownName)
        for deadline in Self.hugeDoubles + [0] {
            await Self.expectRefusal("a batch with deadline \(deadline)", naming: "deadline") {
                _ = try await desk.runBatch(kind: NoopTask.name, input: "0", count: 1, deadline: deadline, retries: 0)
            }
        }
        for retries in Self.hugeIntegers + [101] {
            await Self.expectRefusal("a batch with \(retries) retries", naming: "retries") {
                _ = try await desk.runBatch(kind: NoopTask.name, input: "0", count: 1, deadline: 5, retries: retries)
            }
        }
        for count in Self.hugeIntegers + [0] {
            await Self.expectRefusal("a batch of \(count)", naming: "count") {
                _ = try await desk.runBatch(kind: NoopTask.name, input: "0", count: count, deadline: 5, retries: 0)
            }
        }
        #expect(target.node.system.rejections[.valueOutOfRange] == Self.hugeDoubles.count + 1 + Self.hugeIntegers.count + 1, "each deadline and retries refusal counted")
        try await target.expectServing(after: "hostile batches")
    }

    @Test func aUserTaskWithNumbersOutOfRangeIsRefusedWithTheField() async throws {
        let target = try await Target()
        defer { target.stop() }
        let worker = try target.remote(ScanSystem.self, ScanSystem.wellKnownName)
        let base = BikeUserTask.Input(
            job: "no-such-job", coordinator: target.node.system.node, epoch: 0, stationCount: 2, goalIndex: nil, user: 0, paths: 1, seed: 1,
            timing: MoveTiming(timeScale: 0), maxMoves: 100, attempt: 1, progress: UserProgress())
        var variants: [(String, String, BikeUserTask.Input)] = []
        func input(_ change: (inout BikeUserTask.Input) -> Void) -> BikeUserTask.Input {
            var input = base
            change(&input)
            return input
        }
        for value in Self.hugeIntegers + [0] {
            variants.append(("station count \(value)", "station count", input { $0.stationCount = value }))
            if value != 0 { variants.append(("paths \(value)", "paths", input { $0.paths = value })) }
            variants.append(("max moves \(value)", "max moves", input { $0.maxMoves = value == Int.max ? 0 : value }))
            variants.append(("progress.moves \(value)", "progress.moves", input { $0.progress.moves = value == 0 ? 101 : value }))
            if value != 0 {
                variants.append(("progress.paths \(value)", "progress.paths", input { $0.progress.paths = value }))
                variants.append(("progress.failedTakes \(value)", "progress.failedTakes", input { $0.progress.failedTakes = value }))
                variants.append(("progress.failedLeaves \(value)", "progress.failedLeaves", input { $0.progress.failedLeaves = value }))
            }
        }
        for value in [-1, 2, Int.max, Int.min] { variants.append(("goal index \(value)", "goal index", input { $0.goalIndex = value })) }
        for value in [-1, Int.min] { variants.append(("user \(value)", "user", input { $0.user = value })) }
        for value in Self.hugeDoubles {
            variants.append(("move time \(value)", "move time", input { $0.timing.moveTime = value }))
            variants.append(("time scale \(value)", "time scale", input { $0.timing.timeScale = value }))
        }
        for (attempt, (what, words, hostile)) in variants.enumerated() {
            let text = String(decoding: try JSONEncoder().encode(hostile), as: UTF8.self)
            let request = TaskRequest(job: "hostile", task: 0, attempt: attempt + 1, kind: BikeUserTask.name, input: text)
            await Self.expectRefusal("a bikes.user task with \(what)", naming: words) { _ = try await worker.run(request) }
        }
        #expect(target.node.system.rejections[.valueOutOfRange] == variants.count)
        try await target.expectServing(after: "hostile user tasks")
    }

    @Test func movesAndProgressWithExtremeNumbersGetAnAnswer() async throws {
        let target = try await Target()
        defer { target.stop() }
        let ledger = JobLedger(book: BikeJobBook(users: 2, stations: [Self.network.stations[0]]), recording: false)
        let hosted = ClusterSystem.withWellKnownName(JobStation.name(job: "hostile", index: 0)) {
            JobStation(actorSystem: target.node.system, index: 0, ledger: ledger)
        }
        let station = try target.remote(JobStation.self, JobStation.name(job: "hostile", index: 0))
        for user in Self.hugeIntegers + [0] {
            for number in Self.hugeIntegers {
                for move in [Move(user: user, attempt: number, step: 1), Move(user: user, attempt: 1, step: number)] {
                    // Taken, or refused by the ledger with a reason: either way an answer.
                    do { _ = try await station.takeBike(move) } catch { #expect(!"\(error)".isEmpty) }
                }
            }
        }
        // The same numbers in one batch to the job's desk, stations included: each move answered alone.
        let hostedDesk = ClusterSystem.withWellKnownName(JobStationDesk.name(job: "hostile")) {
            JobStationDesk(actorSystem: target.node.system, ledger: ledger)
        }
        let desk = try target.remote(JobStationDesk.self, JobStationDesk.name(job: "hostile"))
        let batch = (Self.hugeIntegers + [0]).flatMap { number in
            [StationMove(station: number, take: true, move: Move(user: 0, attempt: 1, step: 1)),
             StationMove(station: 0, take: false, move: Move(user: number, attempt: number, step: number))]
        }
        #expect(try await desk.apply(batch).count == batch.count, "an answer per move")
        #expect(try await station.snapshot().freeBikes + station.snapshot().emptySlots == 4, "the station's docks are intact")

        let heard = ConcurrencyCounter()
        let listener = JobListener(actorSystem: target.node.system) { _ in heard.add() }
        let ear = try JobListener.resolve(id: listener.id, using: target.client)
        func progress(_ change: (inout JobProgress) -> Void) -> JobProgress {
            var progress = JobProgress(job: "j", usersDone: 1, usersTotal: 2, usersFailed: 0, retries: 0, elapsed: 1, runningPerNode: ["n": 1])
            change(&progress)
            return progress
        }
        var variants: [(String, String, JobProgress)] = []
        for value in Self.hugeIntegers {
            variants.append(("usersDone \(value)", "usersDone", progress { $0.usersDone = value }))
            variants.append(("usersTotal \(value)", "usersTotal", progress { $0.usersTotal = value }))
            variants.append(("usersFailed \(value)", "usersFailed", progress { $0.usersFailed = value }))
            variants.append(("retries \(value)", "retries", progress { $0.retries = value }))
            variants.append(("running \(value)", "runningPerNode", progress { $0.runningPerNode = ["n": value] }))
        }
        for value in Self.hugeDoubles where value != 1e21 { variants.append(("elapsed \(value)", "elapsed", progress { $0.elapsed = value })) }
        for (what, words, hostile) in variants {
            await Self.expectRefusal("progress with \(what)", naming: words) { try await ear.progress(hostile) }
        }
        try await ear.progress(progress { _ in })
        #expect(heard.value == 1, "only the plausible report reached the display")
        withExtendedLifetime((hosted, hostedDesk, listener)) {}
        try await target.expectServing(after: "hostile moves and progress")
    }
}

/// A count several tasks may add to.
final class ConcurrencyCounter: Sendable {
    private let count = Mutex(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
