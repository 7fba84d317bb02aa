import Synchronization

/// The bike jobs a node's job desk runs now, by id: what the node's bike desk answers
/// about a running job (its network, its stations' bikes) without asking the run's
/// stations. A run adds itself when it starts here and goes when it closes.
public final class LiveBikeRuns: Sendable {
    private let runs = Mutex<[String: BikeJobRun]>([:])

    public init() {}

    /// The run of `job` here now, if any.
    public subscript(job: String) -> BikeJobRun? { runs.withLock { $0[job] } }

    func add(_ run: BikeJobRun) { runs.withLock { $0[run.job.id] = run } }

    /// Removes `run`, if it is still the one kept for its job (a later run of the same job
    /// here, a take-over back, replaces it).
    func remove(_ run: BikeJobRun) {
        runs.withLock { runs in
            if runs[run.job.id] === run { runs[run.job.id] = nil }
        }
    }
}
