import SpokesCluster
/// The coordinator of a job this client submitted stopped answering after it accepted
/// the job (issue 21 §1): the job may still finish there (its report is stored where it
/// ran), so the error says which node, why, and how to find the job's end later.
public struct CoordinatorLost: Error, Sendable, CustomStringConvertible {
    public var job: String
    public var node: String
    /// Where the coordinator listens (`host:port`).
    public var address: String
    public var reason: String

    public init(job: String, node: String, address: String, reason: String) {
        self.job = job
        self.node = node
        self.address = address
        self.reason = reason
    }

    /// What a client says while it looks for the member that took the job over.
    public var lookingForTakeOver: String {
        "lost the coordinator of job \(job), \(node) at \(address): \(reason); looking for the member that took the job over"
    }

    public var description: String {
        "lost the coordinator of job \(job), \(node) at \(address): \(reason). The job goes on there if \(node) is alive "
            + "and cut off; once it is reachable, 'spokes result \(job) --to \(address)' prints its report, "
            + "and 'spokes cancel \(job) --to \(address)' stops it"
    }
}
