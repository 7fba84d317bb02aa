import SpokesCluster
import Synchronization

/// Where a node keeps the reports of the jobs of tasks it coordinated. A node's job
/// store (`jobs.jsonl`, beside the bike jobs) is one; ``InMemoryTaskJobHistory`` keeps
/// them for a process's life.
///
/// Calls may block on file I/O: ``TaskJobs`` makes them through `runBlocking`.
public protocol TaskJobHistory: Sendable {
    /// Stores a finished job's report (marked `stored`), flushed before it returns;
    /// throws when it cannot.
    func append(_ report: TaskJobReport) throws
    /// The stored report of `job`, or nil when it is not stored here.
    func taskJobReport(of job: String) throws -> TaskJobReport?
}

/// Reports kept in memory only, the newest `keep`: for tests and programs without a data directory.
public final class InMemoryTaskJobHistory: TaskJobHistory {
    private let reports = Mutex<[TaskJobReport]>([])
    private let keep: Int

    public init(keep: Int = 100) {
        self.keep = max(1, keep)
    }

    public func append(_ report: TaskJobReport) throws {
        var report = report
        report.stored = true
        reports.withLock { reports in
            reports.append(report)
            if reports.count > keep { reports.removeFirst(reports.count - keep) }
        }
    }

    public func taskJobReport(of job: String) throws -> TaskJobReport? {
        reports.withLock { $0.last { $0.job == job } }
    }
}
