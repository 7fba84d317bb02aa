import SpokesCluster

/// A kind of job a node runs besides its jobs of tasks, as the node's job desk
/// (``JobService``) sees it: listed with the others while it runs, cancelled by id,
/// followed while its replicas hold it. The bike workload is one; each workload keeps its
/// own desk for what only it knows (submitting its jobs, its reports).
public protocol JobWorkload: Sendable {
    /// Its jobs this node coordinates (state `running`), or holds while their coordinator
    /// is gone (`running` or `stalled`), as `spokes jobs` lists them.
    func runningSummaries() async throws -> [JobStore.Summary]
    /// Ids of its jobs this node coordinates now.
    func runningJobIDs() async -> [String]
    /// Cancels `job` if this node coordinates it (waiting a bounded time for it to end);
    /// nil when it does not.
    func cancelHere(job: String, origin: JobService.CancelOrigin) async -> JobService.Cancellation?
    /// Whether this node holds a replica of `job`'s group.
    func holdsReplica(of job: String) async -> Bool
}
