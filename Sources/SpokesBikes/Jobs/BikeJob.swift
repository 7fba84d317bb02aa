import SpokesConcurrency
import FoundationEssentials
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
    /// Whose job it is, its priority and cap (`--owner`, `--priority`, `--max-slots`),
    /// carried on every user task so workers share their slots fairly (issue 32); nil
    /// from older submitters (an unnamed owner at the default priority).
    public var share: JobShare?

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
        if let share { try share.checkRanges() }
        return (deadline, retries)
    }

    /// How a replicated job's run keeps its state on other nodes (see `ReplicatedBikeJobs`).
    public struct Replica: Sendable {
        /// The coordinator's epoch: 0 for the job's first, then one more for each take-over.
        public var epoch: Int
        /// Commits events in order; false when this node no longer owns the job (another
        /// node leads its group): the run stops and reports nothing.
        public var commit: @Sendable (_ events: [BikeJobBook.Event]) async -> Bool
        /// When the job's first coordinator started it (seconds since 1970): its report's
        /// wall time counts from then on whichever node ends it.
        public var startedAt: Double?

        public init(
            epoch: Int, startedAt: Double? = nil, commit: @escaping @Sendable (_ events: [BikeJobBook.Event]) async -> Bool
        ) {
            self.epoch = epoch
            self.startedAt = startedAt
            self.commit = commit
        }
    }

    /// This node lost a replicated job to another node (it was cut off or paused, and the
    /// job's replicas chose another leader): its run stopped and counts nothing.
    public struct LostLead: Error, Sendable, CustomStringConvertible {
        public var job: String
        public var node: String
        public var description: String {
            "job \(job) is no longer coordinated by \(node): another node took it over (ask any node with 'spokes result \(job) --wait')"
        }
    }

    /// Events handed on in one commit, at most.
    static let eventsPerCommit = 4000

    /// The book a new run of the job starts from: the network's stations, no user begun.
    public var startingBook: BikeJobBook {
        BikeJobBook(users: options.users, stations: network.stations, goalIndex: options.goal.flatMap { goal in network.stations.firstIndex { $0.id == goal } })
    }

    /// Runs the job with `node` as coordinator: hosts the stations, sends one
    /// `bikes.user` task per user that has not ended in `book` to the first available
    /// system, retries failures on another node, and reports. Cancelling the calling task
    /// cancels the job everywhere; `cancelReason` then says who did, as a sentence
    /// (`cancelled by the submitter`).
    ///
    /// With a `replica`, every change of the book is committed to the job's replicas as it
    /// is made, and the report is built only once all of them are: if a commit fails, the
    /// run stops and throws ``LostLead``.
    public func run(
        on node: ClusterNode, resuming book: BikeJobBook? = nil, replica: Replica? = nil,
        cancelReason: @escaping @Sendable () -> String = { "cancelled" },
        onProgress: @escaping @Sendable (JobProgress) -> Void = { _ in }
    ) async throws -> SimulationReport {
        let (deadline, retries) = try validated(settings: node.settings)
        let id = id
        let book = book ?? startingBook
        let epoch = replica?.epoch ?? 0
        let system = node.system
        // The stations, the ledger, each attempt's input and which outputs count: the
        // run the job layer drives (Docs/one-job-layer.md).
        let run = BikeJobRun(job: self, book: book, epoch: epoch, on: node, recording: replica != nil, cancelReason: cancelReason)
        let ledger = run.ledger
        let (systems, following, _) = try await node.makeSystems(for: BikeUserTask.name)
        defer { following.cancel() }

        // Users that ended before (this job was taken over) do not run again.
        let done = book.doneUsers
        let users = (0..<options.users).filter { !done.contains($0) }
        let cost = run.cost ?? .waiting
        let shared = (share ?? .unnamed).capped(atPriority: node.settings.maximumPriority)
        let board = node.jobBoard.track(job: id, kind: BikeUserTask.name, title: title, total: users.count, share: shared, cost: cost)
        defer { board.end(cancelled: Task.isCancelled) }
        let tracker = ProgressTracker(board: board, clock: system.runtime.clock, onProgress: onProgress)
        // Every user of a job costs the same: waiting when its moves sleep, cpu at time scale 0.
        let runner = {
            var runner = JobRunner(systems: systems, job: id, kind: BikeUserTask.name, deadline: deadline, retries: retries, cost: cost)
            runner.share = shared
            return runner
        }()
        let runtime = system.runtime
        let start = runtime.now
        let running = Task {
            await runner.run(
                count: users.count,
                input: { task, attempt in try run.input(task: users[task], attempt: attempt) },
                accept: { task, attempt, output in run.accept(task: users[task], attempt: attempt, output: output) },
                onEvent: { event in
                    tracker.record(event)
                    if case .failed(let task, let attempt, let node, let reason, let willRetry) = event {
                        system.log("job \(id): user \(users[task]) attempt \(run.attempt(of: users[task], attempt)) on \(node) failed: \(reason); \(willRetry ? "retrying on another node" : "giving up")")
                    }
                },
                onOutcome: { outcome in run.ended(task: users[outcome.task], outcome: outcome) })
        }
        // Hands the ledger's changes to the replicas as they are made; a failed commit
        // stops the run (another node leads the job now).
        let committing = replica.map { replica in
            Task { () -> Bool in
                func drain() async -> Bool {
                    while true {
                        let (events, _) = ledger.takeEvents(limit: Self.eventsPerCommit)
                        if events.isEmpty { return true }
                        guard await replica.commit(events) else { return false }
                    }
                }
                for await _ in ledger.newEvents {
                    guard await drain() else {
                        running.cancel()
                        return false
                    }
                }
                return await drain()
            }
        }
        let outcomes = await withTaskCancellationHandler { await running.value } onCancel: { running.cancel() }
        // The tasks cancelled before they started were not heard in `onOutcome`.
        for outcome in outcomes where outcome.output == nil {
            run.ended(task: users[outcome.task], outcome: outcome)
        }
        // A cancelled attempt on another node may still be moving: stop the stations first.
        run.close()
        let committed = await committing?.value
        // The stations were hosted (their well-known names registered) while the run lived.
        withExtendedLifetime(run) {}
        if committed == false {
            throw LostLead(job: id, node: system.node.name)
        }
        let cancelled = Task.isCancelled
        if cancelled { system.log("job \(id): \(cancelReason())") }
        var report = report(
            from: ledger.book, wallTime: runtime.now - start, cancelReason: cancelled ? cancelReason() : nil,
            finished: Date(timeIntervalSince1970: runtime.unixNow))
        report.epoch = replica.map { _ in epoch }
        return report
    }

    /// The job's report from its book: every user's progress and end, the stations' counts.
    /// A report built on the node that took the job over is the same as the first
    /// coordinator's would have been, but for the wall time.
    public func report(from book: BikeJobBook, wallTime: Double, cancelReason: String?, finished: Date) -> SimulationReport {
        var results: [SimulationResult] = []
        var failedUsers: [SimulationReport.FailedUser] = []
        var cancelledUsers: [SimulationReport.FailedUser] = []
        var retriedUsers: [SimulationReport.FailedUser] = []
        var tasksPerNode: [String: Int] = [:]
        var retries = 0
        for (user, entry) in book.entries.enumerated() {
            let end = entry.end ?? BikeJobBook.UserEnd(ending: entry.accepted ?? .cancelled, node: nil, attempts: entry.attempt, reasons: [])
            switch end.ending {
            case .failed: failedUsers.append(.init(user: user, reasons: end.reasons))
            case .cancelled: cancelledUsers.append(.init(user: user, reasons: end.reasons))
            default: if !end.reasons.isEmpty { retriedUsers.append(.init(user: user, reasons: end.reasons)) }
            }
            var result = SimulationResult(user: user, progress: entry.progress, ending: end.ending, moveTime: options.timing.moveTime)
            result.node = end.node
            result.attempts = end.attempts
            results.append(result)
            if let node = end.node { tasksPerNode[node, default: 0] += 1 }
            retries += max(0, end.attempts - 1)
        }
        var report = SimulationReport(
            network: network, finalStations: book.stations, options: options, results: results,
            wallTime: wallTime, cancelled: cancelReason != nil, finished: finished)
        report.job = id
        report.retries = retries
        report.failedUsers = failedUsers
        report.cancelledUsers = cancelledUsers
        report.cancelReason = cancelReason
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
        var lastSent: Double?
        var trailingScheduled = false
    }

    private let board: JobBoard.Tracker
    private let onProgress: @Sendable (JobProgress) -> Void
    private let state = Mutex(State())
    private let clock: any RuntimeClock
    private let start: Double
    private static let interval = 0.1

    init(board: JobBoard.Tracker, clock: any RuntimeClock, onProgress: @escaping @Sendable (JobProgress) -> Void) {
        self.board = board
        self.onProgress = onProgress
        self.clock = clock
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
                try? await self.clock.sleep(for: Self.interval)
                self.state.withLock { $0.trailingScheduled = false; $0.lastSent = nil }
                self.publish()
            }
        }
    }

    private func progress(of record: JobBoard.Record, now: Double) -> JobProgress {
        JobProgress(record: record, elapsed: now - start)
    }
}
