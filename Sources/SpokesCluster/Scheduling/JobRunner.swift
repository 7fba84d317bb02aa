import SpokesConcurrency

/// Runs a job's tasks over a coordinator's ``Systems``: each task on the first available
/// system under a deadline; a failure (thrown error, deadline, lost peer) is retried on
/// the first available system other than the one that failed (local first), at most
/// `retries` times, keeping every attempt's reason.
/// A busy answer is not a failure: the task just goes to another system.
public struct JobRunner: Sendable {
    /// One failed attempt.
    public struct Failure: Sendable, Hashable, Codable {
        public var attempt: Int
        public var node: String
        public var reason: String
    }

    /// How one task ended.
    public struct Outcome: Sendable {
        public var task: Int
        /// The accepted output, or nil when every attempt failed.
        public var output: String?
        /// The node that produced the output.
        public var node: String?
        public var attempts: Int
        public var failures: [Failure]
    }

    /// What happens as the job runs, for progress displays.
    public enum Event: Sendable {
        case started(task: Int, attempt: Int, node: String)
        case finished(task: Int, node: String)
        case failed(task: Int, attempt: Int, node: String, reason: String, willRetry: Bool)
    }

    public let systems: Systems
    public let job: String
    public let kind: String
    /// Seconds an attempt may take.
    public let deadline: Double
    /// Retries after the first attempt.
    public let retries: Int

    /// Deadlines a job may ask for, in seconds: more than nothing, at most about 11.6 days.
    public static let deadlineRange = 0.001...1_000_000.0
    /// Retries a job may ask for.
    public static let retryRange = 0...100

    /// Throws when a job's deadline or retries (from a submitter) are out of range.
    public static func checkRanges(deadline: Double, retries: Int) throws(OutOfRange) {
        try OutOfRange.check("deadline", deadline, in: deadlineRange, unit: " seconds")
        try OutOfRange.check("retries", retries, in: retryRange)
    }

    public init(systems: Systems, job: String, kind: String, deadline: Double, retries: Int) {
        self.systems = systems
        self.job = job
        self.kind = kind
        self.deadline = deadline
        self.retries = retries
    }

    /// Runs tasks `0..<count`. `input` gives an attempt's input (so a retry can resume);
    /// `accept` decides whether an attempt's output counts (so a fenced-off attempt's
    /// late result does not). Returns one outcome per task, in task order. Cancelling
    /// the calling task stops scheduling; running attempts are cancelled.
    public func run(
        count: Int,
        input: @escaping @Sendable (_ task: Int, _ attempt: Int) async throws -> String,
        accept: @escaping @Sendable (_ task: Int, _ attempt: Int, _ output: String) async -> Bool = { _, _, _ in true },
        onEvent: @escaping @Sendable (Event) -> Void = { _ in }
    ) async -> [Outcome] {
        var outcomes: [Outcome] = []
        await withTaskGroup(of: Outcome.self) { group in
            for task in 0..<count {
                guard let commitment = try? await systems.firstAvailableSystem(stillToSend: count - task - 1) else { break }
                group.addTask {
                    await runTask(task, on: commitment, input: input, accept: accept, onEvent: onEvent)
                }
            }
            for await outcome in group { outcomes.append(outcome) }
        }
        let finished = Set(outcomes.map(\.task))
        for task in 0..<count where !finished.contains(task) {
            outcomes.append(Outcome(task: task, output: nil, node: nil, attempts: 0, failures: [Failure(attempt: 0, node: "", reason: "cancelled before it started")]))
        }
        return outcomes.sorted { $0.task < $1.task }
    }

    private func runTask(
        _ task: Int, on first: Systems.Commitment,
        input: @Sendable (Int, Int) async throws -> String,
        accept: @Sendable (Int, Int, String) async -> Bool,
        onEvent: @Sendable (Event) -> Void
    ) async -> Outcome {
        var commitment = first
        var attempt = 1
        var failures: [Failure] = []
        while true {
            let reason: String
            do {
                let request = TaskRequest(job: job, task: task, attempt: attempt, kind: kind, input: try await input(task, attempt))
                onEvent(.started(task: task, attempt: attempt, node: commitment.node))
                let system = commitment.system
                // A queued task waits at most until a task ahead of it ends, which is
                // within that task's deadline: it gets that much longer.
                let allowed = commitment.isQueued ? 2 * deadline : deadline
                let result = try await withTimeout(seconds: allowed) { try await system.run(request) }
                switch result {
                case .busy:
                    await systems.releaseBusy(commitment)
                    guard let next = try? await systems.firstAvailableSystem(stillToSend: 0) else {
                        return Outcome(task: task, output: nil, node: nil, attempts: attempt, failures: failures + [Failure(attempt: attempt, node: commitment.node, reason: "cancelled")])
                    }
                    commitment = next
                    continue
                case .done(let output):
                    await systems.release(commitment)
                    if await accept(task, attempt, output) {
                        onEvent(.finished(task: task, node: commitment.node))
                        return Outcome(task: task, output: output, node: commitment.node, attempts: attempt, failures: failures)
                    }
                    reason = "result of a fenced-off attempt"
                }
            } catch {
                await systems.release(commitment)
                if error is TimeoutError || Task.isCancelled {
                    // The worker may still be running it: tell it to stop.
                    let system = commitment.system
                    let key = TaskRequest(job: job, task: task, attempt: attempt, kind: kind, input: "").key
                    Task { try? await system.cancel(key) }
                }
                reason = error is TimeoutError ? "no result within the \(deadline) s deadline" : "\(error)"
            }
            failures.append(Failure(attempt: attempt, node: commitment.node, reason: reason))
            let willRetry = attempt <= retries && !Task.isCancelled
            onEvent(.failed(task: task, attempt: attempt, node: commitment.node, reason: reason, willRetry: willRetry))
            guard willRetry, let next = try? await systems.firstAvailableSystem(avoiding: commitment.node, stillToSend: 0) else {
                return Outcome(task: task, output: nil, node: nil, attempts: attempt, failures: failures)
            }
            commitment = next
            attempt += 1
        }
    }
}
