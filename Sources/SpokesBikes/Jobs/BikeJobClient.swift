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
    /// Seconds each question asked while following a job may take.
    public static let questionTimeout = 3.0

    /// Sends `job` to `node` (which listens at `address`) through `client`. `onAccepted`
    /// hears the coordinator's name as soon as it accepts the job (before it runs);
    /// progress goes to `onProgress`. Cancelling the calling task cancels the job wherever
    /// it runs (the call still brings its report).
    ///
    /// If the coordinator is lost after it accepted the job (it died, or another node took
    /// the job over), `onReattaching` hears it and the client follows the job to the member
    /// that took it over, asking every member it knew but those that left, and returns
    /// that node's report. Throws ``CoordinatorLost`` when no member knows the job for 2 s
    /// in a row (the job may go on: `spokes result JOB --wait` finds its end),
    /// ``JobRefused`` when the node would not run it.
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
        // Where else to look for the job if its coordinator is lost: every member but those
        // that left (one just back from a pause may be a replica; each is asked on its own).
        let status = try NodeStatus.resolve(id: ActorID(node: node, name: NodeStatus.wellKnownName), using: client)
        let others = ((try? await withTimeout(seconds: questionTimeout, clock: client.runtime.clock) { try await status.members() }) ?? [])
            .filter { $0.name != node.name && $0.state != Member.State.left.rawValue }.map(\.address)
        let report: SimulationReport
        do {
            report = try await withTaskCancellationHandler {
                try await service.submit(job, listener: listener)
            } onCancel: {
                Task { _ = try? await desk.cancel(job: job.id, origin: .submitter) }
            }
        } catch RemoteCallError.remoteError(let type, let message, let node) where accepted.withLock({ !$0 }) && FailureReason.readable(message) {
            throw JobRefused(node: node, type: type, reason: message)
        } catch RemoteCallError.peerDisconnected(let node, let reason) where accepted.withLock({ $0 }) {
            let lost = CoordinatorLost(job: job.id, node: node, address: address, reason: reason)
            onReattaching(lost)
            // The coordinator's own address too: a node restarted there (a rolling
            // upgrade) takes the job back from its replica when it wins the election.
            report = try await followed(job.id, at: others + [address], with: client, lost: lost)
        } catch RemoteCallError.remoteError(let type, let message, let node) where accepted.withLock({ $0 }) && type == "\(BikeJob.LostLead.self)" {
            // The coordinator lost the job to another replica: follow it there. Not found
            // is no refusal: the job was accepted and may go on (issue 28).
            let lost = CoordinatorLost(job: job.id, node: node, address: address, reason: message, stoppedThere: true)
            onReattaching(lost)
            report = try await followed(job.id, at: others + [address], with: client, lost: lost)
        }
        withExtendedLifetime(listener) {}
        return report
    }

    /// The report of a job followed after `lost`, or why there is none.
    private static func followed(_ job: String, at addresses: [String], with client: ClusterSystem, lost: CoordinatorLost) async throws -> SimulationReport {
        switch await follow(job, at: addresses, lost: lost.address, with: client) {
        case .ended(let found): return found
        case .stalled(let reason): throw JobStalled(job: job, reason: reason)
        case .notFound: throw lost
        }
    }

    /// Follows a job whose coordinator was lost to the member that took it over: asks
    /// `addresses` every half second for its report, while one of them lists it as
    /// running, until one has it. Not found when none knows the job for 2 s in a row (it
    /// was not replicated, or it runs on at a coordinator only the client lost: members
    /// list a job whose coordinator died until one of them takes it over).
    public static func follow(
        _ job: String, at addresses: [String], lost: String? = nil, with client: ClusterSystem
    ) async -> LostJobFollower.Followed<SimulationReport> {
        await LostJobFollower(system: client, questionTimeout: questionTimeout, patience: 2).follow(at: addresses, lost: lost) { node in
            let bikes = try BikeJobService.resolve(id: ActorID(node: node, name: BikeJobService.wellKnownName), using: client)
            let service = try JobService.resolve(id: ActorID(node: node, name: JobService.wellKnownName), using: client)
            if let report = try await bikes.report(of: job) { return .ended(report) }
            guard let listed = try await service.jobs().first(where: { $0.job == job && $0.isUnfinished }) else {
                // A node of a release before 0.2.0 has no such question: its answer stays unknown.
                return (try? await service.holdsReplica(of: job)) == true ? .running : .unknown
            }
            guard listed.state == .stalled else { return .running }
            return .stalled(listed.stalledReason ?? "too few of its replicas can take part")
        }
    }
}
