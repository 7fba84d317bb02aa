import Foundation
import SpokesBikes
import SpokesCluster

/// Submits a bike job to a node and waits for its report, as a client (not a member).
enum JobClient {
    /// Sends `job` to the node at `address`. `onAccepted` hears the coordinator's name as
    /// soon as it accepts the job (before it runs); progress goes to `onProgress`; Ctrl-C
    /// cancels the job on every node and still returns the report so far.
    static func submit(
        _ job: BikeJob, to address: SocketAddress, settings: ClusterSettings,
        onAccepted: @escaping @Sendable (_ coordinator: String) -> Void = { _ in },
        onProgress: @escaping @Sendable (JobProgress) -> Void
    ) async throws -> SimulationReport {
        // A job may run for hours: the call's deadline is the job's, not a call's.
        try await NodeClient.withClient(of: address, settings: settings, callTimeout: 7 * 24 * 3_600) { client, node in
            let service = try JobService.resolve(id: ActorID(node: node, name: JobService.wellKnownName), using: client)
            let listener = JobListener(actorSystem: client, onAccepted: { _, coordinator in onAccepted(coordinator) }, onProgress: onProgress)
            let interrupt = InterruptHandler(signals: [SIGINT, SIGTERM]) {
                Task { _ = try? await service.cancel(job: job.id, origin: .submitter) }
            }
            defer { interrupt.stop() }
            let report: SimulationReport
            do {
                report = try await service.submit(job, listener: listener)
            } catch RemoteCallError.remoteError(_, let message, let node) where FailureReason.readable(message) {
                throw Refused(node: node, reason: message)
            }
            withExtendedLifetime(listener) {}
            return report
        }
    }

    /// The node would not run the job, and why, in its words (not its error's type).
    struct Refused: Error, CustomStringConvertible {
        var node: String
        var reason: String
        var description: String { "\(node) refused the job: \(reason)" }
    }
}
