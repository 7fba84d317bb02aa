import FoundationEssentials

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
    /// The job's owner, priority and cap, by which the worker shares its slots between
    /// jobs (``WorkerAdmission``); nil from older coordinators.
    public var share: JobShare?
    /// Seconds the task had been ready to run when its coordinator sent this attempt:
    /// since its job's runner began, or since the runner last waited for a place or a
    /// pass (``JobRunner``). The worker's ``TaskContext/readySince`` counts from it, so a
    /// real-time task keeps to the schedule it would have kept had every task started at
    /// once, however long its coordinator took to send it. Nil for a retry, and from
    /// older coordinators: ready when it arrives.
    public var readyAgo: Double?
    /// The same readiness as a reading of this process's runtime clock, for an attempt on
    /// the coordinator's own worker, which shares that clock; never sent (another node's
    /// clock is not this one). A local attempt goes through more tasks and hops than a
    /// remote one before it reaches its worker: counted back from its arrival, a busy
    /// coordinator's own users started 0.2-0.3 s behind the others (BENCHMARKS.md).
    public var readySinceHere: Double?

    /// The keys on the wire: all but ``readySinceHere``.
    private enum CodingKeys: String, CodingKey {
        case job, task, attempt, kind, input, cost, share, readyAgo
    }

    /// The longest ``readyAgo`` a worker believes: a day (a job's runner does not wait
    /// that long for a place without waiting for one, which starts the count again).
    public static let readyAgoRange = 0.0...86_400.0

    public init(
        job: String, task: Int, attempt: Int, kind: String, input: String, cost: TaskCost = .cpu, share: JobShare? = nil, readyAgo: Double? = nil
    ) {
        self.share = share
        self.readyAgo = readyAgo
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
        if let share { try share.checkRanges() }
        if let readyAgo { try OutOfRange.check("readyAgo", readyAgo, in: Self.readyAgoRange, unit: " seconds") }
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

/// Why a task attempt did not produce a result. A failed attempt is retried on another
/// node (up to the job's retries); the description is the reason its submitter reads.
public enum TaskError: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    case unknownKind(String)
    case invalidInput(kind: String, reason: String)
    /// The kind's function threw: the error's type (`PiSampleError.tooManySamples`, with
    /// the enum case when there is one) and message (its `errorDescription` or
    /// `description`), see ``init(kind:thrown:)``.
    case kindFailed(kind: String, type: String, message: String)
    /// The input's JSON is larger than a task's input may be (``TaskLimits``).
    case inputTooLarge(kind: String, bytes: Int, limit: Int)
    /// The output's JSON is larger than a task's output may be (``TaskLimits``).
    case outputTooLarge(kind: String, bytes: Int, limit: Int)
    /// Fault injection (`spokes node --fail-every N`).
    case injectedFailure(node: String, task: Int)

    public var description: String {
        switch self {
        case .unknownKind(let name): "unknown task kind '\(name)'"
        case .invalidInput(let kind, let reason): "invalid input for \(kind): \(reason)"
        case .kindFailed(_, let type, let message):
            message.isEmpty ? type : message.hasPrefix(" (") ? type + message : "\(type): \(message)"
        case .inputTooLarge(let kind, let bytes, let limit):
            "the input of \(kind) is \(bytes) bytes of JSON; a task's input may be at most \(limit) (a quarter of limits.max_frame_bytes)"
        case .outputTooLarge(let kind, let bytes, let limit):
            "the output of \(kind) is \(bytes) bytes of JSON; a task's output may be at most \(limit) (a quarter of limits.max_frame_bytes)"
        case .injectedFailure(let node, let task): "injected failure on \(node) (every Nth task fails), task \(task)"
        }
    }

    /// What a kind's thrown `error` says to its submitter: its type, with the enum case
    /// when one can be told (`MyError.tooLarge`), and its message: `errorDescription` of a
    /// `LocalizedError`, `description` of a `CustomStringConvertible`, or else its case's
    /// associated values or its fields (`MyError.tooLarge (limit: 5)`, `Oops (code: 3)`: a
    /// space before the values, so no report takes the words for a dump of a value).
    public init(kind: String, thrown error: any Error) {
        let typeName = String(describing: type(of: error))
        let shown = String(describing: error)
        let described = (error as? any LocalizedError)?.errorDescription ?? ((error as Any) is any CustomStringConvertible ? shown : nil)
        let mirror = Mirror(reflecting: error)
        var type = typeName
        var message = described ?? ""
        if mirror.displayStyle == .enum {
            // A case with values is a child named after the case; one without, when it
            // has no description of its own, prints as its name.
            if let label = mirror.children.first?.label {
                type += "." + label
                if described == nil { message = " " + String(shown.dropFirst(label.count)) }
            } else if described == nil {
                type += "." + shown
            }
        } else if described == nil {
            message = shown.hasPrefix(typeName) ? " " + String(shown.dropFirst(typeName.count)) : shown
        }
        self = .kindFailed(kind: kind, type: type, message: message)
    }

    /// `error`, thrown by the kind `kind`, as the worker sends it on: the cluster's own
    /// errors as they are (`CancellationError`, so the attempt counts as cancelled;
    /// `TaskError`; ``OutOfRange``, so the refusal is counted), any other as
    /// ``kindFailed(kind:type:message:)``.
    static func passingOwn(_ error: any Error, kind: String) -> any Error {
        switch error {
        case is CancellationError, is TaskError, is OutOfRange: error
        default: TaskError(kind: kind, thrown: error)
        }
    }
}

/// How large a task's input and output may be. Both travel as JSON text inside a frame's
/// JSON (the input inside the ``TaskRequest``, the output inside the reply), escaped
/// twice, so a byte may take up to four in the frame; a frame may be at most
/// `limits.max_frame_bytes` (8 MiB by default), and a larger one would cost the
/// connection. So each may be at most a quarter of a frame, less 1 KiB for the envelope:
/// 2,096,896 bytes with the default. Larger data belongs in files the task reads.
public enum TaskLimits {
    /// The most bytes of JSON a task's input or output may have, for frames of at most
    /// `frameBytes` bytes.
    public static func maximumDataBytes(frameBytes: Int) -> Int {
        max(0, frameBytes - min(1_024, frameBytes / 2)) / 4
    }
}
