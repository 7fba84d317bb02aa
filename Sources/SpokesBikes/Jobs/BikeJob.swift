import Foundation
import SpokesCluster
import Synchronization

/// A bike simulation spread over a cluster: what to run, and how the coordinator runs it.
public struct BikeJob: Sendable, Codable {
    /// The job's id, chosen by the submitter so it can cancel the job.
    public var id: String
    public var network: Network
    public var options: SimulationOptions
    /// Seconds a user task may run before it is cancelled and retried (nil: the node's default).
    public var deadline: Double?
    /// Retries of a failed user task (nil: the node's default).
    public var retries: Int?

    public init(id: String = BikeJob.newID(), network: Network, options: SimulationOptions, deadline: Double? = nil, retries: Int? = nil) {
        self.id = id
        self.network = network
        self.options = options
        self.deadline = deadline
        self.retries = retries
    }

    /// A line for people: `BikeMi: 300 users x 10 paths`.
    public var title: String {
        "\(network.name): \(options.users) users x \(options.paths) paths"
    }

    /// A fresh job id, e.g. `job-1a2b3c4d`.
    public static func newID() -> String {
        JobIdentifier.make("job")
    }

    /// Checks the job against `settings` before anything runs: the options fit the
    /// network, the deadline and retries (the node's defaults where the job has none) are
    /// in range. Returns the deadline and retries to use.
    public func validated(settings: ClusterSettings) throws -> (deadline: Double, retries: Int) {
        try options.validate(for: network)
        let deadline = deadline ?? settings.taskDeadline
        let retries = retries ?? settings.taskRetries
        guard deadline > 0, deadline.isFinite else {
            throw SimulationError.invalidSetting(name: "deadline", value: "\(deadline)", expected: "a positive number of seconds")
        }
        guard (0...100).contains(retries) else {
            throw SimulationError.invalidSetting(name: "retries", value: "\(retries)", expected: "0 to 100")
        }
        return (deadline, retries)
    }

    /// Runs the job with `node` as coordinator: hosts the stations, sends one
    /// `bikes.user` task per user to the first available system, retries failures on
    /// this node, and reports. Cancelling the calling task cancels the job everywhere;
    /// `cancelReason` then says who did, as a sentence (`cancelled by the submitter`).
    public func run(
        on node: ClusterNode, cancelReason: @escaping @Sendable () -> String = { "cancelled" },
        onProgress: @escaping @Sendable (JobProgress) -> Void = { _ in }
    ) async throws -> SimulationReport {
        let (deadline, retries) = try validated(settings: node.settings)
        let ledger = JobLedger(users: options.users)
        let goalIndex = options.goal.flatMap { goal in network.stations.firstIndex { $0.id == goal } }
        let system = node.system
        let stations = network.stations.enumerated().map { index, station in
            ClusterSystem.withWellKnownName(JobStation.name(job: id, index: index)) {
                JobStation(actorSystem: system, station: station, index: index, ledger: ledger, goalIndex: goalIndex)
            }
        }
        let (systems, following, _) = try await node.makeSystems(for: BikeUserTask.name)
        defer { following.cancel() }

        let board = node.jobBoard.track(job: id, kind: BikeUserTask.name, title: title, total: options.users)
        defer { board.end(cancelled: Task.isCancelled) }
        let tracker = ProgressTracker(board: board, onProgress: onProgress)
        let base = BikeUserTask.Input(
            job: id, coordinator: system.node, stationCount: stations.count, goalIndex: goalIndex, user: 0,
            paths: options.paths, seed: options.seed, timing: options.timing, maxMoves: options.maxMovesPerUser,
            progress: UserProgress())
        // Every user of a job costs the same: waiting when its moves sleep, cpu at time scale 0.
        let runner = JobRunner(systems: systems, job: id, kind: BikeUserTask.name, deadline: deadline, retries: retries, cost: BikeUserTask().cost(of: base))
        let clock = ContinuousClock()
        let start = clock.now
        let outcomes = await runner.run(
            count: options.users,
            input: { user, attempt in
                var input = base
                input.user = user
                input.progress = ledger.beginAttempt(user: user, attempt: attempt)
                return String(decoding: try JSONEncoder().encode(input), as: UTF8.self)
            },
            accept: { user, attempt, _ in ledger.accept(user: user, attempt: attempt) != nil },
            onEvent: { event in
                tracker.record(event)
                if case .failed(let user, let attempt, let node, let reason, let willRetry) = event {
                    system.log("job \(id): user \(user) attempt \(attempt) on \(node) failed: \(reason); \(willRetry ? "retrying on another node" : "giving up")")
                }
            })
        let cancelled = Task.isCancelled
        if cancelled { system.log("job \(id): \(cancelReason())") }

        var results: [SimulationResult] = []
        var failedUsers: [SimulationReport.FailedUser] = []
        var cancelledUsers: [SimulationReport.FailedUser] = []
        var retriedUsers: [SimulationReport.FailedUser] = []
        var tasksPerNode: [String: Int] = [:]
        // A cancelled attempt on another node may still be moving: stop the stations first.
        ledger.close()
        for outcome in outcomes {
            let progress = ledger.progress(user: outcome.task)
            var ending: SimulationResult.Ending = .failed
            let reasons = outcome.failures.map { failure in
                guard failure.cancelled else { return "attempt \(failure.attempt) on \(failure.node): \(failure.reason)" }
                return failure.node.isEmpty
                    ? "attempt \(failure.attempt): \(cancelReason()) before it started"
                    : "attempt \(failure.attempt) on \(failure.node): \(cancelReason()) while it ran"
            }
            if let output = outcome.output {
                ending = (try? JSONDecoder().decode(SimulationResult.self, from: Data(output.utf8)))?.ending ?? .finishedPaths
                if !reasons.isEmpty { retriedUsers.append(.init(user: outcome.task, reasons: reasons)) }
            } else if outcome.cancelled {
                ending = .cancelled
                cancelledUsers.append(.init(user: outcome.task, reasons: reasons))
            } else {
                failedUsers.append(.init(user: outcome.task, reasons: reasons))
            }
            var result = SimulationResult(user: outcome.task, progress: progress, ending: ending, moveTime: options.timing.moveTime)
            result.node = outcome.node
            result.attempts = outcome.attempts
            results.append(result)
            if let node = outcome.node { tasksPerNode[node, default: 0] += 1 }
        }
        var finalStations: [Station] = []
        for station in stations { finalStations.append(try await station.snapshot()) }
        var report = SimulationReport(
            network: network, finalStations: finalStations, options: options, results: results,
            wallTime: (clock.now - start).seconds, cancelled: cancelled)
        report.job = id
        report.retries = JobRunner.retries(in: outcomes)
        report.failedUsers = failedUsers
        report.cancelledUsers = cancelledUsers
        report.cancelReason = cancelled ? cancelReason() : nil
        report.retriedUsers = retriedUsers
        report.tasksPerNode = tasksPerNode
        return report
    }
}

/// Turns job events into progress snapshots: at most ten a second, and always the
/// latest state within a tenth of a second (a suppressed update is sent when the
/// interval ends), so a display never shows a stale count. The counts are the job's
/// record on the coordinator's ``JobBoard``, which the dashboard shows too.
private final class ProgressTracker: Sendable {
    private struct State {
        var lastSent: ContinuousClock.Instant?
        var trailingScheduled = false
    }

    private let board: JobBoard.Tracker
    private let onProgress: @Sendable (JobProgress) -> Void
    private let state = Mutex(State())
    private let clock = ContinuousClock()
    private let start: ContinuousClock.Instant
    private static let interval = Duration.milliseconds(100)

    init(board: JobBoard.Tracker, onProgress: @escaping @Sendable (JobProgress) -> Void) {
        self.board = board
        self.onProgress = onProgress
        start = clock.now
    }

    func record(_ event: JobRunner.Event) {
        board.record(event)
        publish()
    }

    private func publish() {
        let now = clock.now
        let (snapshot, scheduleTrailing): (JobProgress?, Bool) = state.withLock { state in
            // Read under this lock (the board's lock nests inside it, never the other
            // way), so a snapshot sent later never holds older counts.
            guard let record = board.current else { return (nil, false) }
            let last = record.done + record.failed == record.total
            if last || state.lastSent.map({ now - $0 >= Self.interval }) ?? true {
                state.lastSent = now
                return (progress(of: record, now: now), false)
            }
            guard !state.trailingScheduled else { return (nil, false) }
            state.trailingScheduled = true
            return (nil, true)
        }
        if let snapshot { onProgress(snapshot) }
        if scheduleTrailing {
            Task {
                try? await Task.sleep(for: Self.interval)
                self.state.withLock { $0.trailingScheduled = false; $0.lastSent = nil }
                self.publish()
            }
        }
    }

    private func progress(of record: JobBoard.Record, now: ContinuousClock.Instant) -> JobProgress {
        JobProgress(
            job: record.id, usersDone: record.done, usersTotal: record.total, usersFailed: record.failed, retries: record.retries,
            elapsed: (now - start).seconds,
            runningPerNode: record.perNode.filter { $0.value.running > 0 }.mapValues(\.running))
    }
}
