/// One attempt of one task of a job, as sent to a worker.
public struct TaskRequest: Sendable, Hashable, Codable {
    public var job: String
    /// The task's number in its job.
    public var task: Int
    /// 1 for the first try, then 2, 3, ... for retries.
    public var attempt: Int
    /// A registered ``TaskKind`` name.
    public var kind: String
    /// The input as JSON text.
    public var input: String
    /// Which of the worker's budgets it takes: a cpu slot or a waiting slot.
    public var cost: TaskCost

    public init(job: String, task: Int, attempt: Int, kind: String, input: String, cost: TaskCost = .cpu) {
        self.job = job
        self.task = task
        self.attempt = attempt
        self.kind = kind
        self.input = input
        self.cost = cost
    }

    /// Throws when the task number is negative or the attempt below 1.
    public func checkRanges() throws(OutOfRange) {
        try OutOfRange.check("task", task, in: 0...Int.max)
        try OutOfRange.check("attempt", attempt, in: 1...Int.max)
    }

    /// Identifies the attempt, for cancellation.
    public var key: String { "\(job)/\(task)/\(attempt)" }
}

/// A worker's answer to ``ScanSystem/run(_:)``.
public enum TaskResult: Sendable, Hashable, Codable {
    /// The task ran; its output as JSON text.
    case done(output: String)
    /// Every slot was taken: not a failure, try another system.
    case busy
}

/// Why a task attempt did not produce a result.
public enum TaskError: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    case unknownKind(String)
    case invalidInput(kind: String, reason: String)
    /// Fault injection (`spokes node --fail-every N`).
    case injectedFailure(node: String, task: Int)

    public var description: String {
        switch self {
        case .unknownKind(let name): "unknown task kind '\(name)'"
        case .invalidInput(let kind, let reason): "invalid input for \(kind): \(reason)"
        case .injectedFailure(let node, let task): "injected failure on \(node) (every Nth task fails), task \(task)"
        }
    }
}
