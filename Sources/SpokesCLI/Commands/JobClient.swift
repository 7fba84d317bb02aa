import Foundation
import SpokesBikes
import SpokesCluster

/// Submits a bike job to a node and waits for its report, as a client (not a member).
enum JobClient {
    /// A job may run for hours: a submitting call's deadline is the job's, not a call's.
    static let jobCallTimeout: Double = 7 * 24 * 3_600

    /// Sends `job` to the node at `address`. `onAccepted` hears the coordinator's name as
    /// soon as it accepts the job (before it runs); progress goes to `onProgress`; Ctrl-C
    /// cancels the job on every node and still returns the report so far.
    static func submit(
        _ job: BikeJob, to address: SocketAddress, settings: ClusterSettings,
        onAccepted: @escaping @Sendable (_ coordinator: String) -> Void = { _ in },
        onProgress: @escaping @Sendable (JobProgress) -> Void
    ) async throws -> SimulationReport {
        try await NodeClient.withClient(of: address, settings: settings, callTimeout: jobCallTimeout) { client, node in
            let service = try JobService.resolve(id: ActorID(node: node, name: JobService.wellKnownName), using: client)
            let listener = JobListener(actorSystem: client, onAccepted: { _, coordinator in onAccepted(coordinator) }, onProgress: onProgress)
            let interrupt = InterruptHandler(signals: [SIGINT, SIGTERM]) {
                Task { _ = try? await service.cancel(job: job.id, origin: .submitter) }
            }
            defer { interrupt.stop() }
            let report: SimulationReport
            do {
                report = try await service.submit(job, listener: listener)
            } catch RemoteCallError.remoteError(let type, let message, let node) where FailureReason.readable(message) {
                throw JobRefused(node: node, type: type, reason: message)
            }
            withExtendedLifetime(listener) {}
            return report
        }
    }

}
