import FoundationEssentials
import SpokesCluster

/// The node's jobs of tasks (`spokes map`, `spokes sweep`) as a ``JobWorkload``: what
/// its ``TaskJobs`` desk runs and holds.
struct TaskJobsWorkload: JobWorkload {
    let desk: TaskJobs
    let system: ClusterSystem

    func runningSummaries() async throws -> [JobStore.Summary] {
        let coordinator = system.node.name
        return try await desk.runningJobs().map { job in
            var summary = JobStore.Summary(
                job: job.job, state: job.stalled == nil ? .running : .stalled, finished: nil, coordinator: coordinator, title: job.title, tasks: job.tasks,
                succeeded: job.succeeded, failed: job.failed, cancelled: job.cancelled, retries: job.retries,
                wallTime: job.wallTime, kind: job.kind, stalledReason: job.stalled)
            summary.slots = job.slots
            return summary
        }
    }

    func runningJobIDs() async -> [String] {
        // A job held for a dead coordinator has no slots here.
        (try? await desk.runningJobs().filter { $0.slots != nil }.map(\.job)) ?? []
    }

    func cancelHere(job: String, origin: JobService.CancelOrigin) async -> JobService.Cancellation? {
        guard let report = try? await desk.cancelHere(job: job, reason: origin.reason) else { return nil }
        return JobService.Cancellation(
            coordinator: report.coordinator, coordinatorAddress: system.address.description,
            summary: JobStore.Summary(taskJob: report, finished: Date(timeIntervalSince1970: system.runtime.unixNow)), storeError: report.storeError)
    }

    /// Whether this node holds `job`'s group (a workload's job, a bike job, is followed
    /// through the node's job desk: a replica not caught up yet still says it runs on).
    func holdsReplica(of job: String) async -> Bool {
        await desk.whenLocal { await $0.holdsReplica(of: job) } ?? false
    }
}
