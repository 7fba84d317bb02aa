import FoundationEssentials
import SpokesCluster
import SpokesJobs

/// One run of a bike job on its coordinator, as the job layer drives a workload's run
/// (``JobWorkloadRun``, Docs/one-job-layer.md): one task per user (the task's number is
/// the user's), the job's stations hosted under the run's epoch, and every change kept in
/// a recording ``JobLedger`` whose events the job's group replays.
///
/// - An attempt's input resumes the user from the ledger and fences off its older
///   attempts (``JobLedger/beginAttempt(user:attempt:)``). A run that resumes a job
///   numbers its attempts above every attempt begun before (the book's), so none is
///   fenced off by mistake.
/// - An output counts only from the user's current attempt (``JobLedger/accept(user:attempt:ending:)``).
/// - A user's end is an event too (``JobLedger/end(user:_:)``).
public final class BikeJobRun: JobWorkloadRun {
    /// The most events one ``takeEvents()`` hands out: about 300 KB of JSON (72 bytes an
    /// event), under 1 MiB in the Raft call that carries them, escaped twice. Every event
    /// since the last batch in one command made a 6.6 MB call at 16,000 real-time users,
    /// which a follower's 8 MiB frame limit refused (BENCHMARKS.md, "A command larger
    /// than a frame").
    public static let eventsPerChunk = 4_096

    public let job: BikeJob
    /// The coordinator's epoch, which names its stations.
    public let epoch: Int
    public let ledger: JobLedger
    /// The stations and the desk taking many moves a call, hosted (their well-known names
    /// registered) while the run lives.
    private let stations: [JobStation]
    private let desk: JobStationDesk
    /// Every user's input but its number, attempt and progress.
    private let base: BikeUserTask.Input
    /// Each user's attempts begun before this run (0 for a new job).
    private let attemptBase: [Int]
    private let cancelReason: @Sendable () -> String
    private let runtime: Runtime
    /// When the job's first coordinator started it (seconds since 1970), else when this
    /// run did (on the runtime's clock): what the report's wall time counts from.
    private let startedAt: Double?
    private let began: Double
    /// Where the node's bike desk finds this run while it lives.
    private let live: LiveBikeRuns?

    /// A run of `job` from `book` on `node` as the coordinator of `epoch`; `cancelReason`
    /// says, as a sentence, who cancelled it (read when a user's attempt is cancelled).
    /// `startedAt`: when the job's first coordinator started it (seconds since 1970).
    /// `live`: where the run is listed while it lives.
    public init(
        job: BikeJob, book: BikeJobBook, epoch: Int, on node: ClusterNode, recording: Bool = true, startedAt: Double? = nil,
        live: LiveBikeRuns? = nil, cancelReason: @escaping @Sendable () -> String = { "cancelled" }
    ) {
        self.job = job
        self.epoch = epoch
        self.cancelReason = cancelReason
        runtime = node.system.runtime
        self.startedAt = startedAt
        began = node.system.runtime.now
        self.live = live
        let ledger = JobLedger(book: book, recording: recording)
        self.ledger = ledger
        let system = node.system
        let id = job.id
        stations = job.network.stations.indices.map { index in
            ClusterSystem.withWellKnownName(JobStation.name(job: id, epoch: epoch, index: index)) {
                JobStation(actorSystem: system, index: index, ledger: ledger)
            }
        }
        desk = ClusterSystem.withWellKnownName(JobStationDesk.name(job: id, epoch: epoch)) {
            JobStationDesk(actorSystem: system, ledger: ledger)
        }
        let options = job.options
        base = BikeUserTask.Input(
            job: id, coordinator: system.node, epoch: epoch, stationCount: job.network.stations.count, goalIndex: book.goalIndex, user: 0,
            paths: options.paths, seed: options.seed, timing: options.timing, maxMoves: options.maxMovesPerUser, attempt: 1,
            progress: UserProgress(), batchesMoves: true)
        attemptBase = book.entries.map(\.attempt)
        live?.add(self)
    }

    /// What every user task of the job costs a worker: waiting when its moves sleep, cpu
    /// at time scale 0.
    public var cost: TaskCost? { BikeUserTask().cost(of: base) }

    /// The ledger's attempt number of `user`'s `attempt` in this run.
    public func attempt(of user: Int, _ attempt: Int) -> Int { attemptBase[user] + attempt }

    public func input(task user: Int, attempt: Int) throws -> String {
        var input = base
        input.user = user
        input.attempt = self.attempt(of: user, attempt)
        input.progress = ledger.beginAttempt(user: user, attempt: input.attempt)
        return String(decoding: try JSONEncoder().encode(input), as: UTF8.self)
    }

    public func accept(task user: Int, attempt: Int, output: String) -> Bool {
        ledger.accept(user: user, attempt: self.attempt(of: user, attempt), ending: Self.ending(of: output)) != nil
    }

    /// Nothing: the book holds each user's end (its ``SimulationResult``'s ending is in the
    /// `accepted` event), and the report is built from the book.
    public func keptOutput(task: Int, output: String) -> String { "" }

    public func ended(task user: Int, outcome: JobRunner.Outcome) {
        ledger.end(user: user, end(of: outcome))
    }

    /// At most ``eventsPerChunk`` events at a time.
    public func takeEvents() -> String? {
        let (events, _) = ledger.takeEvents(limit: Self.eventsPerChunk)
        return events.isEmpty ? nil : BikeEventsCodec.encodeEvents(events)
    }

    public var newEvents: AsyncStream<Void> { ledger.newEvents }

    public func close() {
        ledger.close()
        ledger.stopRecording()
        live?.remove(self)
    }

    /// The job's ``SimulationReport`` as JSON, from the book now: its wall time from the
    /// job's first start, over every epoch and coordinator.
    public func report(ends: [Int: TaskJobReport.TaskEnd], cancelReason: String?) -> String? {
        let now = runtime.unixNow
        let wallTime = startedAt.map { max(0, now - $0) } ?? runtime.now - began
        var report = job.report(from: ledger.book, wallTime: wallTime, cancelReason: cancelReason, finished: Date(timeIntervalSince1970: now))
        report.epoch = epoch
        return (try? JSONEncoder().encode(report)).map { String(decoding: $0, as: UTF8.self) }
    }

    /// How a user's outcome of this run ends its part of the job.
    func end(of outcome: JobRunner.Outcome) -> BikeJobBook.UserEnd {
        let reasons = outcome.failures.map { failure in
            guard failure.cancelled else { return "attempt \(failure.attempt) on \(failure.node): \(failure.reason)" }
            return failure.node.isEmpty
                ? "attempt \(failure.attempt): \(cancelReason()) before it started"
                : "attempt \(failure.attempt) on \(failure.node): \(cancelReason()) while it ran"
        }
        let ending: SimulationResult.Ending
        if let output = outcome.output {
            ending = Self.ending(of: output)
        } else {
            ending = outcome.cancelled ? .cancelled : .failed
        }
        return BikeJobBook.UserEnd(ending: ending, node: outcome.output == nil ? nil : outcome.node, attempts: outcome.attempts, reasons: reasons)
    }

    /// How a user's output says it ended.
    static func ending(of output: String) -> SimulationResult.Ending {
        (try? JSONDecoder().decode(SimulationResult.self, from: Data(output.utf8)))?.ending ?? .finishedPaths
    }
}
