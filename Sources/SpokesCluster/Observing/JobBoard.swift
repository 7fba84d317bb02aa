import SpokesConcurrency
import Synchronization

/// The jobs a node coordinates, as they run, and the last few it finished: what the
/// dashboard shows of jobs. Coordinators feed it the same ``JobRunner/Event``s that
/// drive their progress displays.
///
/// Invariant: per job, `done + failed + cancelled <= total`, and each node's `running`
/// never goes below zero. At most `keepFinished` ended jobs are kept, newest first.
public final class JobBoard: Sendable {
    /// How a job stands.
    public enum State: String, Sendable, Hashable, Codable {
        case running
        /// Every task has a result.
        case finished
        /// Stopped on request before every task ran.
        case cancelled
        /// Ended with tasks whose every attempt failed.
        case failed
    }

    /// One node's part in a job.
    public struct Share: Sendable, Hashable, Codable {
        /// Tasks whose result this node produced.
        public var done = 0
        /// Attempts sent there and not answered yet: running, or queued for a slot.
        public var running = 0
    }

    /// One job as the board sees it.
    public struct Record: Sendable, Hashable, Codable {
        public var id: String
        /// The task kind it runs (`bikes.user` for a bike simulation).
        public var kind: String
        /// A line for people, e.g. `BikeMi: 300 users x 10 paths`.
        public var title: String
        public var coordinator: String
        public var total: Int
        public var done = 0
        /// Tasks whose every attempt failed.
        public var failed = 0
        /// Tasks stopped because the job was cancelled.
        public var cancelled = 0
        /// Attempts started again after a failed one (a worker that was full does not count).
        public var retries = 0
        /// Monotonic seconds on the coordinator.
        public var startedAt: Double
        public var endedAt: Double?
        public var state = State.running
        public var perNode: [String: Share] = [:]
        /// Whose job it is, its priority and cap (issue 32); nil for a job without one
        /// (a bike job). Its places in use are the `running` of `perNode` added up.
        public var share: JobShare?
        /// The budget its tasks take, when the coordinator knows one for the whole job.
        public var cost: TaskCost?
    }

    /// Feeds one job's events to the board.
    public struct Tracker: Sendable {
        let board: JobBoard
        public let job: String

        public func record(_ event: JobRunner.Event) { board.record(event, job: job) }

        /// The job's record now (running or ended).
        public var current: Record? { board.record(of: job) }

        /// The job ended (cancelled: stopped on request).
        public func end(cancelled: Bool) { board.end(job: job, cancelled: cancelled) }

        /// Another node took the job over: it leaves this board without ending (the
        /// taker's board lists it, running), and counts in no ending here.
        public func handOver() { board.handOver(job: job) }
    }

    private struct Contents {
        var running: [String: Record] = [:]
        var ended: [Record] = []
        /// Jobs ended since the board was made, by how they ended (never forgotten).
        var endedCounts: [State: Int] = [:]
        /// Failed attempts of jobs coordinated here that were retried, since the board
        /// was made (never goes down, unlike a record's `retries`).
        var retriedTotal = 0
    }

    public let coordinator: String
    public let keepFinished: Int
    /// The node's clock: what start and end times are read from when none is given.
    private let clock: any RuntimeClock
    private let state = Mutex(Contents())

    public init(coordinator: String, keepFinished: Int = 20, clock: any RuntimeClock = RealClock()) {
        self.coordinator = coordinator
        self.clock = clock
        self.keepFinished = max(0, keepFinished)
    }

    /// Puts a new job on the board, with its owner, priority and cap and its tasks' budget
    /// when it has them.
    public func track(
        job: String, kind: String, title: String, total: Int, share: JobShare? = nil, cost: TaskCost? = nil, at time: Double? = nil
    ) -> Tracker {
        let time = time ?? clock.now
        state.withLock {
            var record = Record(id: job, kind: kind, title: title, coordinator: coordinator, total: total, startedAt: time)
            record.share = share
            record.cost = cost
            $0.running[job] = record
        }
        return Tracker(board: self, job: job)
    }

    func record(_ event: JobRunner.Event, job: String) {
        state.withLock { state in
            // Changed in place: a record copied out and written back copied its per-node
            // table at every task's start and end.
            guard let index = state.running.index(forKey: job) else { return }
            if Self.apply(event, to: &state.running.values[index]) { state.retriedTotal += 1 }
        }
    }

    /// Counts `event` in `record`; true when it is a failed attempt that will be retried.
    private static func apply(_ event: JobRunner.Event, to record: inout Record) -> Bool {
        switch event {
        case .started(_, let attempt, let node):
            record.perNode[node, default: Share()].running += 1
            if attempt > 1 { record.retries += 1 }
        case .busy(_, let attempt, let node):
            record.perNode[node, default: Share()].running = max(0, record.perNode[node, default: Share()].running - 1)
            if attempt > 1 { record.retries = max(0, record.retries - 1) }
        case .finished(_, let node):
            record.perNode[node, default: Share()].running = max(0, record.perNode[node, default: Share()].running - 1)
            record.perNode[node, default: Share()].done += 1
            record.done = min(record.total - record.failed - record.cancelled, record.done + 1)
        case .failed(_, _, let node, _, let willRetry):
            record.perNode[node, default: Share()].running = max(0, record.perNode[node, default: Share()].running - 1)
            if !willRetry { record.failed = min(record.total - record.done - record.cancelled, record.failed + 1) }
            return willRetry
        case .cancelled(_, _, let node):
            if let node { record.perNode[node, default: Share()].running = max(0, record.perNode[node, default: Share()].running - 1) }
            record.cancelled = min(record.total - record.done - record.failed, record.cancelled + 1)
        }
        return false
    }

    func end(job: String, cancelled: Bool, at time: Double? = nil) {
        let time = time ?? clock.now
        state.withLock { state in
            guard var record = state.running.removeValue(forKey: job) else { return }
            record.endedAt = time
            for node in record.perNode.keys { record.perNode[node]?.running = 0 }
            record.state = cancelled ? .cancelled : record.failed > 0 ? .failed : .finished
            state.endedCounts[record.state, default: 0] += 1
            state.ended.insert(record, at: 0)
            if state.ended.count > keepFinished { state.ended.removeLast(state.ended.count - keepFinished) }
        }
    }

    func handOver(job: String) {
        _ = state.withLock { $0.running.removeValue(forKey: job) }
    }

    /// The record of `job`, running or among the ended ones kept.
    public func record(of job: String) -> Record? {
        state.withLock { $0.running[job] ?? $0.ended.first { $0.id == job } }
    }

    /// How many jobs coordinated here ended since the board was made, by how they ended
    /// (`finished`, `cancelled`, `failed`), counting those no longer kept: the
    /// `spokes_jobs_ended_total` counter of `GET /metrics`.
    public var endedCounts: [State: Int] {
        state.withLock { $0.endedCounts }
    }

    /// How many failed attempts of jobs coordinated here were retried since the board was
    /// made: the `spokes_task_retries_total` counter of `GET /metrics`.
    public var retriedCount: Int {
        state.withLock { $0.retriedTotal }
    }

    /// Jobs running now.
    public var runningCount: Int {
        state.withLock { $0.running.count }
    }

    /// Running jobs (newest first), then ended ones (newest first).
    public var records: [Record] {
        state.withLock { state in
            state.running.values.sorted { $0.startedAt > $1.startedAt } + state.ended
        }
    }
}
