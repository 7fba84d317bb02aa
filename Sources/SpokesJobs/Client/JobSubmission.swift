import SpokesCluster
import SpokesConcurrency
import Synchronization

/// What every client does with a job it submitted, whatever the job runs (`map`, `sweep`,
/// a bike job's `submit`): it calls the node it joined, which coordinates the job, and
/// waits for the report; and when that coordinator is lost after it accepted the job
/// (its connection dropped, or it said it stopped running the job: another replica leads
/// it), the client follows the job to the member that took it over (``LostJobFollower``)
/// and ends with that member's report. One implementation of that contract for every
/// client (issue 28 §3); a workload's client gives only its own calls.
///
/// Cancelling the calling task asks the coordinator to cancel the job, and the call still
/// brings the report. A cancellation while following is carried to the member that runs
/// the job (the lost coordinator could not keep it): `ask` hears `cancelling` true.
public struct JobSubmission: Sendable {
    public let job: String
    /// The node the client joined, which coordinates the job, and where it listens.
    public let entry: NodeID
    public let entryAddress: String
    public let client: ClusterSystem
    /// Seconds each question to a member may take.
    public let questionTimeout: Double
    /// Seconds in a row with no member knowing the job after which a follow gives up
    /// (``LostJobFollower/patience``).
    public let patience: Double

    public init(job: String, entry: NodeID, entryAddress: String, client: ClusterSystem, questionTimeout: Double, patience: Double) {
        self.job = job
        self.entry = entry
        self.entryAddress = entryAddress
        self.client = client
        self.questionTimeout = questionTimeout
        self.patience = patience
    }

    /// Runs the submission: `call` is the submitting call to the coordinator; `accepted`
    /// says whether the coordinator has accepted the job (a failure before is a refusal,
    /// ``JobRefused``, when it reads as one); `stoppedRunning` whether an error type the
    /// coordinator answered means it stopped running the job (another replica leads it);
    /// `cancelAtCoordinator` asks it to cancel the job; `ask` asks a member what it knows
    /// of the job while the client follows it. Throws ``CoordinatorLost`` when no member
    /// knows the job within the patience, ``JobStalled`` when one holds it and it cannot
    /// go on.
    public func run<Report: Sendable>(
        accepted: @escaping @Sendable () -> Bool, stoppedRunning: @escaping @Sendable (_ errorType: String) -> Bool,
        onReattaching: @escaping @Sendable (CoordinatorLost) -> Void, call: @escaping @Sendable () async throws -> Report,
        cancelAtCoordinator: @escaping @Sendable () async -> Void,
        ask: @escaping @Sendable (_ member: NodeID, _ cancelling: Bool) async throws -> LostJobFollower.Answer<Report>
    ) async throws -> Report {
        // Where else to look for the job if its coordinator is lost (another member takes
        // a replicated job over): every member but those that left, the suspect and dead
        // ones too (one just back from a pause or a cut may be a replica, and asking one
        // that is gone costs nothing: each member is asked on its own); and the
        // coordinator's own address (a node restarted there, a rolling upgrade, takes the
        // job back from its replica when it wins the election).
        let status = try NodeStatus.resolve(id: ActorID(node: entry, name: NodeStatus.wellKnownName), using: client)
        let others = ((try? await withTimeout(seconds: questionTimeout, clock: client.runtime.clock) { try await status.members() }) ?? [])
            .filter { $0.name != entry.name && $0.state != Member.State.left.rawValue }.map(\.address)
        let addresses = others + [entryAddress]
        // The call is not the job: cancelling this task asks the coordinator to cancel the
        // job, and the call still brings its report.
        let submitted = Task { try await call() }
        // Set once the caller cancels: a follow after a lost coordinator then carries the
        // cancellation to the member that runs the job.
        let cancelled = Atomic<Bool>(false)
        let isCancelled: @Sendable () -> Bool = { cancelled.load(ordering: .acquiring) }
        let markCancelled: @Sendable () -> Void = { cancelled.store(true, ordering: .releasing) }
        let follower = LostJobFollower(system: client, questionTimeout: questionTimeout, patience: patience)
        let (job, entryAddress) = (job, entryAddress)
        /// Follows the job to the member that runs it now. Not cut short by the caller's
        /// cancellation, which it passes on instead: a cancelled call still brings the
        /// job's report (issue 28: a cancelled client that lost its coordinator said
        /// "refused" at once while the job ran to its end elsewhere).
        @Sendable func follow(after lost: CoordinatorLost) async throws -> Report {
            onReattaching(lost)
            let following = Task {
                await follower.follow(at: addresses, lost: entryAddress) { member in
                    try await ask(member, isCancelled())
                }
            }
            let followed = await withTaskCancellationHandler {
                await following.value
            } onCancel: {
                markCancelled()
            }
            switch followed {
            case .ended(let found): return found
            case .stalled(let reason): throw JobStalled(job: job, reason: reason)
            case .notFound: throw lost
            }
        }
        do {
            return try await withTaskCancellationHandler {
                try await submitted.value
            } onCancel: {
                markCancelled()
                Task { await cancelAtCoordinator() }
            }
        } catch RemoteCallError.remoteError(let type, let message, let node) where !accepted() && FailureReason.readable(message) {
            throw JobRefused(node: node, type: type, reason: message)
        } catch RemoteCallError.peerDisconnected(let node, let reason) where accepted() {
            return try await follow(after: CoordinatorLost(job: job, node: node, address: entryAddress, reason: reason))
        } catch RemoteCallError.remoteError(let type, let message, let node) where accepted() && stoppedRunning(type) {
            // The coordinator stopped running the job (another replica leads it, or most of
            // its replicas cannot be reached): follow it there. Not found is no refusal: the
            // job was accepted and may go on.
            return try await follow(after: CoordinatorLost(job: job, node: node, address: entryAddress, reason: message, stoppedThere: true))
        }
    }
}
