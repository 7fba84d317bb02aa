import SpokesCluster

/// A snapshot of a running cluster job, for live displays.
public struct JobProgress: Sendable, Hashable, Codable {
    public var job: String
    public var usersDone: Int
    public var usersTotal: Int
    /// Users whose every attempt failed.
    public var usersFailed: Int
    /// Failed attempts so far (each was retried or ended its user).
    public var retries: Int
    /// Real seconds since the job started.
    public var elapsed: Double
    /// Node name -> user tasks running there now.
    public var runningPerNode: [String: Int]

    /// Users finished per real second so far.
    public var rate: Double { elapsed > 0 ? Double(usersDone) / elapsed : 0 }

    /// Real seconds until the last user is likely done; nil before the first finishes.
    public var estimatedRemaining: Double? {
        rate > 0 ? Double(usersTotal - usersDone - usersFailed) / rate : nil
    }
}

extension JobProgress {
    /// The progress a coordinator's record of the job (its ``JobBoard`` entry) shows,
    /// `elapsed` seconds after it started.
    public init(record: JobBoard.Record, elapsed: Double) {
        self.init(
            job: record.id, usersDone: record.done, usersTotal: record.total, usersFailed: record.failed, retries: record.retries,
            elapsed: elapsed, runningPerNode: record.perNode.filter { $0.value.running > 0 }.mapValues(\.running))
    }
}
