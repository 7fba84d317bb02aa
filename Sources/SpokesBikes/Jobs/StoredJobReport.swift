import SpokesCluster
import SpokesJobs

/// A finished job's stored report as a node of this workload answers for it: a bike job's
/// or a job of tasks' (a map, a sweep). What `spokes result` prints, and what the
/// simulator's whole nodes check their `result` clients against.
public enum StoredJobReport: Sendable {
    case bikes(SimulationReport)
    case tasks(TaskJobReport)

    /// The report of `job` stored on `node`, asked through `system`: the bike desk first,
    /// then the node's jobs of tasks; nil when the node stores neither. The report lookup
    /// ``JobDeskClient/result(of:at:waiting:storedReport:onWaiting:)`` takes.
    ///
    /// A bike job the job layer's one desk ran is stored as a job of tasks carrying the
    /// bike report: found there (stored between the two questions), it is the bike report
    /// (`simulate-cluster --model nodes`: a `result --wait` client printed "6 of 6 tasks
    /// succeeded" for a bike job).
    @Sendable public static func find(_ job: String, on node: NodeID, using system: ClusterSystem) async throws -> StoredJobReport? {
        let bikes = try BikeJobService.resolve(id: ActorID(node: node, name: BikeJobService.wellKnownName), using: system)
        if let report = try await bikes.report(of: job) { return .bikes(report) }
        guard let tasks = try await JobDeskClient.taskJobReport(of: job, on: node, using: system) else { return nil }
        return SimulationReport(storedWorkloadOf: tasks).map(StoredJobReport.bikes) ?? .tasks(tasks)
    }
}
