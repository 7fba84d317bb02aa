import SpokesCluster
/// A job of many tasks of one kind (`spokes map`, `spokes sweep`, ``ClusterClient/map(_:over:deadline:retries:share:progress:)``):
/// what a submitter sends to a node's ``TaskJobs``, which coordinates and stores it.
///
/// Inputs are JSON texts, one per task; the submitter checked them when it runs the kind
/// itself, and every worker checks its own task's input again.
public struct TaskJobSpec: Sendable, Hashable, Codable {
    /// Made by the submitter (`map-0a3f442b`), so it can name the job before the node answers.
    public var id: String
    public var kind: String
    /// The submitter's schema of the kind when it runs it (tasks then go only to nodes
    /// with that schema), else nil (the most common one among the nodes).
    public var schema: TaskSchema?
    /// A line for people, e.g. `sweep Milano: 96 runs`.
    public var title: String
    public var inputs: [String]
    /// Seconds an attempt may take.
    public var deadline: Double
    /// Retries after the first attempt, each on another node.
    public var retries: Int
    /// When its first coordinator accepted it (Unix seconds, set by that coordinator and
    /// kept with the spec): a node that takes the job over reports its wall time from
    /// then, not from its own start (review, issue 29 §1.9). Nil in specs of older nodes.
    public var startedAt: Double?
    /// Whose job it is, its priority and cap (`--owner`, `--priority`, `--max-slots`);
    /// nil in specs of older submitters (an unnamed owner, the default priority).
    public var share: JobShare?
    /// The workload whose shared state the job's group carries beside its tasks, and its
    /// parameters (the bike job's network and options); nil for a job of tasks alone.
    public var workload: WorkloadParameters?

    /// A workload a job runs with (``JobWorkloadState``): its registered name and its
    /// parameters as the workload's JSON.
    public struct WorkloadParameters: Sendable, Hashable, Codable {
        public var name: String
        public var parameters: String

        public init(name: String, parameters: String) {
            self.name = name
            self.parameters = parameters
        }
    }

    /// Longest workload parameters, in bytes (a network of many stations fits).
    public static let maximumWorkloadParameterBytes = 16 << 20

    public init(id: String, kind: String, schema: TaskSchema?, title: String, inputs: [String], deadline: Double, retries: Int) {
        self.id = id
        self.kind = kind
        self.schema = schema
        self.title = title
        self.inputs = inputs
        self.deadline = deadline
        self.retries = retries
    }

    /// Most tasks one job may have.
    public static let maximumTasks = 10_000_000
    /// Longest id and title, in bytes.
    public static let maximumIDBytes = 100
    public static let maximumTitleBytes = 1_000
    public static let maximumKindBytes = 200

    /// Throws when a field a peer sent is out of range: the id, title and kind's
    /// lengths, the task count, the deadline and the retries.
    public func checkRanges() throws(OutOfRange) {
        if let startedAt, !(startedAt.isFinite && startedAt >= 0) {
            throw OutOfRange(name: "startedAt", value: "\(startedAt)", expected: "Unix seconds")
        }
        try OutOfRange.check("id length", id.utf8.count, in: 1...Self.maximumIDBytes)
        // The id names files (the journal's) and Raft groups: letters, digits, `-` and `_` only.
        guard id.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == 0x2D || $0 == 0x5F }) else {
            throw OutOfRange(name: "id", value: String(id.prefix(40)), expected: "letters, digits, '-' and '_'")
        }
        try OutOfRange.check("kind length", kind.utf8.count, in: 1...Self.maximumKindBytes)
        try OutOfRange.check("title length", title.utf8.count, in: 0...Self.maximumTitleBytes)
        try OutOfRange.check("tasks", inputs.count, in: 1...Self.maximumTasks)
        try JobRunner.checkRanges(deadline: deadline, retries: retries)
        if let share { try share.checkRanges() }
        if let workload {
            try OutOfRange.check("workload name length", workload.name.utf8.count, in: 1...Self.maximumKindBytes)
            try OutOfRange.check("workload parameters length", workload.parameters.utf8.count, in: 0...Self.maximumWorkloadParameterBytes)
        }
    }
}
