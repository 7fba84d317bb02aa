import FoundationEssentials
import SpokesCluster
import SpokesJobs
import SpokesReplication

/// The bike simulation as a workload of the job layer (Docs/one-job-layer.md): a bike job
/// is a job of `bikes.user` tasks, one per user, whose group carries the job's
/// ``BikeJobBook`` (stations and users) and whose run is a ``BikeJobRun``. Its spec's
/// workload parameters are the ``BikeJob`` as JSON.
public enum BikeWorkload {
    public static let name = "bikes"

    /// The workload as a node registers it (``JobWorkloads``); each run is listed in
    /// `live` while it lives (the node's bike desk answers from there).
    public static func workload(live: LiveBikeRuns? = nil) -> JobWorkloads.Workload {
        JobWorkloads.Workload(
            start: { parameters in try job(from: parameters).startingBook },
            restore: { try MachineText.decode(BikeJobBook.self, from: $0) },
            run: { context in
                guard let parameters = context.spec.workload?.parameters, let book = context.state as? BikeJobBook else {
                    throw NotABikeJob(job: context.spec.id)
                }
                return BikeJobRun(
                    job: try job(from: parameters), book: book, epoch: context.epoch, on: context.node, startedAt: context.spec.startedAt, live: live,
                    cancelReason: context.cancelReason)
            },
            olderFormat: BikeJobMachine.format())
    }

    /// The bike job a spec's parameters hold, checked: every field in range and the
    /// options fit the network. Read once per process (``DecodedBikeJobs``).
    static func job(from parameters: String) throws -> BikeJob {
        try DecodedBikeJobs.shared.job(from: parameters) { parameters in
            let job = try MachineText.decode(BikeJob.self, from: parameters)
            try job.checkRanges()
            try job.options.validate(for: job.network)
            return job
        }
    }

    /// A job whose spec or state is not a bike job's.
    struct NotABikeJob: Error, CustomStringConvertible {
        var job: String
        var description: String { "job \(job) is not a bike job" }
    }
}

extension BikeJob {
    /// The job as the job layer runs it: one `bikes.user` task per user, the deadline and
    /// retries (the node's defaults where the job has none) checked against `settings`,
    /// the bike workload carrying the job itself.
    public func taskJobSpec(settings: ClusterSettings) throws -> TaskJobSpec {
        let (deadline, retries) = try validated(settings: settings)
        var spec = TaskJobSpec(
            id: id, kind: BikeUserTask.name, schema: nil, title: title, inputs: Array(repeating: "", count: options.users),
            deadline: deadline, retries: retries)
        spec.share = share
        spec.workload = .init(name: BikeWorkload.name, parameters: MachineText.encode(self))
        return spec
    }
}
