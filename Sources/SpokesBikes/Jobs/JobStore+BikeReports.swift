import FoundationEssentials
import SpokesJobs

/// The bike workload's jobs in the node's job store: each report stored under the key
/// `report` (the key release 0.1 wrote, so older files read unchanged).
extension JobStore {
    /// The key bike job reports are stored under.
    public static let bikeReportKey = "report"

    /// Stores a finished bike job's report (marked `stored`), flushed to the device before
    /// it returns; throws ``StoreError`` and leaves the file as it was when it cannot.
    public func append(_ report: SimulationReport, coordinator: String, finished: Date? = nil) throws {
        let (summary, record) = try Self.record(of: report, coordinator: coordinator, finished: finished ?? now)
        try append(summary: summary, key: Self.bikeReportKey, report: record)
    }

    /// The stored line of a bike job's report (what ``append(_:coordinator:finished:)`` writes).
    static func line(for report: SimulationReport, coordinator: String, finished: Date) throws -> [UInt8] {
        let (summary, record) = try record(of: report, coordinator: coordinator, finished: finished)
        return try line(summary: summary, key: bikeReportKey, report: record)
    }

    /// A report's summary and its JSON, marked `stored`.
    private static func record(of report: SimulationReport, coordinator: String, finished: Date) throws -> (Summary, Data) {
        var report = report
        report.stored = true
        report.storeError = nil
        return (Summary(report: report, coordinator: coordinator, finished: finished), try JSONEncoder().encode(report))
    }

    /// The report of bike job `job`, or nil when it is not stored here (or no longer kept):
    /// stored as a bike report, or, for a job the job layer's one desk ran, the workload's
    /// report in its job's report.
    public func report(of job: String) throws -> SimulationReport? {
        if let bikes = try report(of: job, key: Self.bikeReportKey, decodedBy: { try? JSONDecoder().decode(SimulationReport.self, from: $0) }) {
            return bikes
        }
        // Nil inside when the job of tasks is no bike job: that too is kept, not decoded again.
        let workload: SimulationReport?? = try report(of: job, key: Self.taskJobKey) { json in
            (try? JSONDecoder().decode(TaskJobReport.self, from: json)).map(SimulationReport.init(storedWorkloadOf:))
        }
        return workload ?? nil
    }
}

extension SimulationReport {
    /// The bike report a job of the job layer's one desk carries (``TaskJobReport/workloadReport``),
    /// saying whether it was stored; nil when the job is no bike job.
    public init?(workloadOf report: TaskJobReport) {
        guard report.kind == BikeUserTask.name, let text = report.workloadReport,
              var decoded = try? JSONDecoder().decode(SimulationReport.self, from: Data(text.utf8))
        else { return nil }
        decoded.stored = report.stored
        decoded.storeError = report.storeError
        self = decoded
    }

    /// The bike report a stored job of the job layer's one desk carries (it is stored, so
    /// it says so); nil when the job is no bike job.
    public init?(storedWorkloadOf report: TaskJobReport) {
        self.init(workloadOf: report)
        stored = true
        storeError = nil
    }
}

extension JobStore.Summary {
    /// The summary of a finished bike job's report: its title the network, its tasks the users.
    public init(report: SimulationReport, coordinator: String, finished: Date) {
        let failed = report.failedUsers?.count ?? 0
        self.init(
            job: report.job ?? "?",
            state: report.cancelled ? .cancelled : failed > 0 || !report.conservation.holds ? .failed : .completed,
            finished: finished.ISO8601Format(), coordinator: coordinator, title: report.network.id,
            tasks: report.users, succeeded: report.completedUsers, failed: failed,
            cancelled: report.cancelledUsers?.count ?? 0, retries: report.retries ?? 0, wallTime: report.wallTime)
    }
}
