import FoundationEssentials
import SpokesCluster

/// How a job of tasks (``TaskJobSpec``) ended: each task's output or failures, where it
/// ran, and whether the job was cancelled. What `spokes result` prints again, from the
/// coordinator's job store.
public struct TaskJobReport: Sendable, Hashable, Codable {
    /// How one task ended.
    public struct TaskEnd: Sendable, Hashable, Codable {
        /// The accepted output's JSON, or nil when no attempt succeeded.
        public var output: String?
        /// The node that produced the output.
        public var node: String?
        public var attempts: Int
        /// Each failed attempt, with its node and reason.
        public var failures: [JobRunner.Failure]

        public init(_ outcome: JobRunner.Outcome) {
            output = outcome.output
            node = outcome.node
            attempts = outcome.attempts
            failures = outcome.failures
        }

        /// No output because the job was cancelled, rather than because every attempt failed.
        public var cancelled: Bool { output == nil && failures.last?.cancelled == true }

        /// The outcome of task `task`, as ``JobRunner`` gives it.
        public func outcome(task: Int) -> JobRunner.Outcome {
            JobRunner.Outcome(task: task, output: output, node: node, attempts: attempts, failures: failures)
        }
    }

    public var job: String
    public var kind: String
    /// The schema the tasks ran at.
    public var schema: TaskSchema?
    public var title: String
    public var coordinator: String
    /// Each task's input, as submitted.
    public var inputs: [String]
    /// Each task's end, in input order.
    public var tasks: [TaskEnd]
    /// Real seconds from the job's start to its last task's end.
    public var wallTime: Double
    /// Why it stopped early (`cancelled with 'spokes cancel'`), nil when it ran to the end.
    public var cancelReason: String?
    /// Whether the coordinator stored the report, and why not when it could not.
    public var stored: Bool?
    public var storeError: String?
    /// A workload's job: the workload's own report (its JSON, e.g. a bike simulation's),
    /// from its state at the end and every task's end.
    public var workloadReport: String?

    public init(
        job: String, kind: String, schema: TaskSchema?, title: String, coordinator: String, inputs: [String], tasks: [TaskEnd],
        wallTime: Double, cancelReason: String?
    ) {
        self.job = job
        self.kind = kind
        self.schema = schema
        self.title = title
        self.coordinator = coordinator
        self.inputs = inputs
        self.tasks = tasks
        self.wallTime = wallTime
        self.cancelReason = cancelReason
    }

    public var succeeded: Int { tasks.count { $0.output != nil } }
    /// Tasks whose every attempt failed.
    public var failed: Int { tasks.count { $0.output == nil && !$0.cancelled } }
    public var cancelledTasks: Int { tasks.count(where: \.cancelled) }
    /// Attempts started again after a failed one.
    public var retries: Int { tasks.reduce(0) { $0 + max(0, $1.attempts - 1) } }
    public var cancelled: Bool { cancelReason != nil }
    /// Every task's outcome, in input order.
    public var outcomes: [JobRunner.Outcome] { tasks.enumerated().map { $1.outcome(task: $0) } }
}
