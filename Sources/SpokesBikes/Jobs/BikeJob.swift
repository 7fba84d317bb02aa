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

    /// This node lost a replicated job to another node (it was cut off or paused, and the
    /// job's replicas chose another leader): its run stopped and counts nothing.
    public struct LostLead: Error, Sendable, CustomStringConvertible {
        public var job: String
        public var node: String
        public var description: String {
            "job \(job) is no longer coordinated by \(node): another node took it over (ask any node with 'spokes result \(job) --wait')"
        }
    }

    /// The book a new run of the job starts from: the network's stations, no user begun.
    public var startingBook: BikeJobBook {
        BikeJobBook(users: options.users, stations: network.stations, goalIndex: options.goal.flatMap { goal in network.stations.firstIndex { $0.id == goal } })
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
