import FoundationEssentials
import SpokesCluster
import SpokesConcurrency
import SpokesJobs
import Synchronization

/// A client's side of a bike job: submits it to a node's `bikejobs` desk and waits for
/// its report, following the job to the member that took it over if its coordinator is
/// lost. `spokes submit` and the simulator's whole nodes (`--model nodes`) both use it.
public enum BikeJobClient {
    /// A job may run for hours: a submitting call's deadline is the job's, not a call's.
    public static let jobCallTimeout: Double = 7 * 24 * 3_600
    /// Seconds each question asked while following a job may take: as long as a job of
    /// tasks' client allows (its call timeout, which the follower caps at
    /// ``LostJobFollower/longestSilence``). It was 3 s: at 16,000 real-time users on 3
    /// nodes of this 2-core machine, the node that took a job over and the other replica,
    /// both re-dispatching every user, answered in more than 3 s, and the client said no
    /// member ran the job while one did (BENCHMARKS.md, "A command larger than a frame").
    public static let questionTimeout = LostJobFollower.longestSilence

    /// Sends `job` to `node` (which listens at `address`) through `client`. `onAccepted`
    /// hears the coordinator's name as soon as it accepts the job (before it runs);
    /// progress goes to `onProgress`. Cancelling the calling task cancels the job wherever
    /// it runs (the call still brings its report).
    ///
    /// If the coordinator is lost after it accepted the job (it died, or another node took
    /// the job over), `onReattaching` hears it and the client follows the job to the member
    /// that took it over (``JobSubmission``, as every client does), and returns that node's
    /// report. Throws ``CoordinatorLost`` when no member knows the job for 2 s in a row
    /// (the job may go on: `spokes result JOB --wait` finds its end), ``JobRefused`` when
    /// the node would not run it.
    public static func submit(
        _ job: BikeJob, to node: NodeID, at address: String, using client: ClusterSystem,
        onAccepted: @escaping @Sendable (_ coordinator: String) -> Void = { _ in },
        onReattaching: @escaping @Sendable (CoordinatorLost) -> Void = { _ in },
        onProgress: @escaping @Sendable (JobProgress) -> Void = { _ in }
    ) async throws -> SimulationReport {
        let service = try BikeJobService.resolve(id: ActorID(node: node, name: BikeJobService.wellKnownName), using: client)
        let desk = try JobService.resolve(id: ActorID(node: node, name: JobService.wellKnownName), using: client)
        let accepted = Mutex(false)
        let listener = JobListener(actorSystem: client, onAccepted: { _, coordinator in
            accepted.withLock { $0 = true }
            onAccepted(coordinator)
        }, onProgress: onProgress)
        let submission = JobSubmission(job: job.id, entry: node, entryAddress: address, client: client, questionTimeout: questionTimeout, patience: 2)
        let report = try await submission.run(
            accepted: { accepted.withLock { $0 } }, stoppedRunning: { $0 == "\(BikeJob.LostLead.self)" }, onReattaching: onReattaching,
            call: { try await service.submit(job, listener: listener) },
            cancelAtCoordinator: { _ = try? await desk.cancel(job: job.id, origin: .submitter) },
            ask: { member, cancelling in try await ask(member, about: job.id, cancelling: cancelling, using: client) })
        withExtendedLifetime(listener) {}
        return report
    }

    /// What `node` knows of `job`: its report, or whether it runs or holds it. Once
    /// `cancelling` (the submitter cancelled while following the job), a member that runs
    /// it is asked to cancel it; its report, saying so, ends the follow.
    static func ask(
        _ node: NodeID, about job: String, cancelling: Bool, using client: ClusterSystem
    ) async throws -> LostJobFollower.Answer<SimulationReport> {
        let bikes = try BikeJobService.resolve(id: ActorID(node: node, name: BikeJobService.wellKnownName), using: client)
        let service = try JobService.resolve(id: ActorID(node: node, name: JobService.wellKnownName), using: client)
        if let report = try await bikes.report(of: job) { return .ended(report) }
        guard let listed = try await service.jobs().first(where: { $0.job == job && $0.isUnfinished }) else {
            // A node of a release before 0.2.0 has no such question: its answer stays unknown.
            return (try? await service.holdsReplica(of: job)) == true ? .running : .unknown
        }
        guard listed.state == .stalled else {
            // Its report, saying it was cancelled, is the next answer.
            if cancelling { _ = try await service.cancelHere(job: job, origin: .submitter) }
            return .running
        }
        return .stalled(listed.stalledReason ?? "too few of its replicas can take part")
    }
}
