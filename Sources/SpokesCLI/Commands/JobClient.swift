import FoundationEssentials
import Glibc
import SpokesBikes
import SpokesCluster
import SpokesConcurrency
import SpokesJobs

/// Submits a bike job to a node and waits for its report, as a client (not a member):
/// ``BikeJobClient`` over a connection of the command's own, with Ctrl-C cancelling the job.
enum JobClient {
    /// A job may run for hours: a submitting call's deadline is the job's, not a call's.
    static let jobCallTimeout = BikeJobClient.jobCallTimeout

    /// Sends `job` to the node at `address`; see ``BikeJobClient/submit(_:to:at:using:onAccepted:onReattaching:onProgress:)``.
    /// Ctrl-C (or SIGTERM) cancels the job on every node and still returns the report so far.
    static func submit(
        _ job: BikeJob, to address: SocketAddress, settings: ClusterSettings,
        onAccepted: @escaping @Sendable (_ coordinator: String) -> Void = { _ in },
        onReattaching: @escaping @Sendable (CoordinatorLost) -> Void = { _ in },
        onProgress: @escaping @Sendable (JobProgress) -> Void
    ) async throws -> SimulationReport {
        try await NodeClient.withClient(of: address, settings: settings, callTimeout: jobCallTimeout) { client, node in
            let desk = try JobService.resolve(id: ActorID(node: node, name: JobService.wellKnownName), using: client)
            let interrupt = InterruptHandler(signals: [SIGINT, SIGTERM]) {
                Task { _ = try? await desk.cancel(job: job.id, origin: .submitter) }
            }
            defer { interrupt.stop() }
            return try await BikeJobClient.submit(
                job, to: node, at: "\(address)", using: client, onAccepted: onAccepted, onReattaching: onReattaching, onProgress: onProgress)
        }
    }
}
