import SpokesCluster
/// The coordinator of a job this client submitted stopped answering after it accepted
/// the job (issue 21 §1), or said it stopped running it, and the client found no member
/// that runs it within its patience: the job may still finish (its report is stored where
/// it ran), so the error says which node, why, and how to find the job's end later. Never
/// a refusal: the job was accepted (issue 28: a client told "refused" for a job that ran).
public struct CoordinatorLost: Error, Sendable, CustomStringConvertible {
    public var job: String
    public var node: String
    /// Where the coordinator listens (`host:port`).
    public var address: String
    public var reason: String
    /// The coordinator answered that it stopped running the job (its replicas no longer
    /// take its progress from there: another of them leads it, or most cannot be reached),
    /// rather than going silent: the job goes on, if at all, where its replicas run it.
    public var stoppedThere: Bool

    public init(job: String, node: String, address: String, reason: String, stoppedThere: Bool = false) {
        self.job = job
        self.node = node
        self.address = address
        self.reason = reason
        self.stoppedThere = stoppedThere
    }

    /// What a client says while it looks for the member that took the job over.
    public var lookingForTakeOver: String {
        "lost the coordinator of job \(job), \(node) at \(address): \(reason); looking for the member that took the job over"
    }

    public var description: String {
        if stoppedThere {
            return "lost the coordinator of job \(job), \(node) at \(address): it stopped running the job (\(reason)), and no member "
                + "this client asked ran it. The job was accepted and may go on where its replicas run it: "
                + "'spokes result \(job) --wait' finds its end, and 'spokes cancel \(job)' stops it"
        }
        return "lost the coordinator of job \(job), \(node) at \(address): \(reason). The job goes on there if \(node) is alive "
            + "and cut off, or at a member that takes it over: 'spokes result \(job) --wait' finds its end "
            + "(with --to \(address) once \(node) is reachable), and 'spokes cancel \(job) --to \(address)' stops it"
    }
}
