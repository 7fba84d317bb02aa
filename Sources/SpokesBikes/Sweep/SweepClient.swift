import FoundationEssentials
import SpokesCluster
import SpokesJobs

/// A client's side of a sweep (`spokes sweep`, and the simulator's whole nodes): a
/// ``SweepPlan`` run as one job of `bikes.sweep-run` tasks through a ``ClusterClient``
/// (the node it joined coordinates and stores the job; the client follows it if that node
/// is lost, ``ClusterClient/run(kind:schema:inputs:deadline:retries:title:share:jobPrefix:progress:onStart:onOutcome:onReattaching:)``),
/// and the ``SweepReport`` of the job's stored report.
public enum SweepClient {
    /// Runs every run of `plan` as a task of one job (`sweep-` and 8 hex digits), each
    /// attempt within `deadline` seconds, a failed one retried `retries` times on another
    /// member. `onStart` hears the job's id and nodes once it starts, `progress` each
    /// run's end, `onReattaching` a lost coordinator the client follows the job from.
    /// Returns the stored job; cancelling the calling task cancels the sweep and still
    /// returns it. Throws as ``ClusterClient`` does (``JobRefused``, ``CoordinatorLost``,
    /// ``JobStalled``).
    public static func run(
        _ plan: SweepPlan, with client: ClusterClient, deadline: Double, retries: Int, share: JobShare? = nil,
        progress: @escaping @Sendable (ClusterClient.Progress) -> Void = { _ in },
        onStart: @escaping @Sendable (ClusterClient.Plan) -> Void = { _ in },
        onReattaching: (@Sendable (CoordinatorLost) -> Void)? = nil
    ) async throws -> TaskJobReport {
        let encoder = JSONEncoder()
        let inputs = try (0..<plan.runCount).map { String(decoding: try encoder.encode(plan.taskInput(forRun: $0)), as: UTF8.self) }
        return try await client.run(
            kind: SweepRunTask.name, schema: SweepRunTask.schema, inputs: inputs, deadline: deadline, retries: retries,
            title: "sweep \(plan.network.name): \(plan.runCount) runs", share: share, jobPrefix: "sweep",
            progress: progress, onStart: onStart, onReattaching: onReattaching)
    }

    /// The sweep report of a stored job of `bikes.sweep-run` tasks (its inputs say each
    /// run's network and parameters): each run once, with its figures or its attempts'
    /// failures. Throws ``NoRuns`` for a job without runs, and when its network or an
    /// input does not decode.
    public static func report(of job: TaskJobReport) throws -> SweepReport {
        let decoder = JSONDecoder()
        let inputs = try job.inputs.map { try decoder.decode(SweepRunTask.Input.self, from: Data($0.utf8)) }
        guard let source = inputs.first?.network else { throw NoRuns(job: job.job) }
        let network = try source.resolve()
        let runs = zip(inputs, job.outcomes).map { input, outcome -> SweepReport.Run in
            if let output = outcome.output, let figures = try? decoder.decode(SweepRunFigures.self, from: Data(output.utf8)) {
                return SweepReport.Run(run: input.run, node: outcome.node, figures: figures)
            }
            let reasons = outcome.failures.map { "attempt \($0.attempt)\($0.node.isEmpty ? "" : " on \($0.node)"): \($0.reason)" }
            return SweepReport.Run(run: input.run, failures: reasons.isEmpty ? ["no output"] : reasons)
        }
        return SweepReport(network: network, runs: runs, job: job.job, wallTime: job.wallTime)
    }

    /// A stored job with no runs: not a sweep's.
    public struct NoRuns: Error, Sendable, Hashable, CustomStringConvertible {
        public var job: String
        public var description: String { "job \(job) has no runs" }
    }
}
