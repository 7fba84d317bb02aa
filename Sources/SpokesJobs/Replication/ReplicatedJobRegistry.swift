import FoundationEssentials
import SpokesCluster
import SpokesConsensus
import SpokesReplication

/// The cluster's jobs as a replicated state machine: job id -> its specification, its
/// state (running, then finished) and, once finished, its result. Specifications and
/// results are JSON texts the registry checks but never reads. A Raft group drives it
/// (`RaftHost`), so every replica holds the same jobs, and a job accepted by a majority
/// outlives any one node.
///
/// Every command is idempotent, so a proposer that lost its answer (a leader died, a
/// call timed out) proposes it again safely: submitting a job again with the same
/// specification answers `alreadySubmitted`, finishing it again answers
/// `alreadyFinished` with the first result, which stays (a job's result is recorded
/// once). Conflicting commands (another specification under a known id, finishing an
/// unknown job) are refused with a reason; a command that is not one of these (bad
/// JSON, a job id or text beyond the limits) is refused too, the same way on every
/// replica.
public struct ReplicatedJobRegistry: ReplicatedStateMachine, Hashable {
    /// Limits on what a command may carry (every replica applies the same ones).
    public enum Limits {
        public static let maximumIDLength = 128
        /// Bytes of a specification or a result.
        public static let maximumTextBytes = 4 << 20
    }

    /// Running from its submission until its first result is recorded.
    public enum JobState: String, Sendable, Hashable, Codable {
        case running
        case finished
    }

    /// One job as the registry holds it.
    public struct Job: Sendable, Hashable, Codable {
        public var id: String
        /// The job's specification, a JSON text.
        public var specification: String
        public var state: JobState
        /// The job's result, a JSON text, once finished.
        public var result: String?

        public init(id: String, specification: String, state: JobState = .running, result: String? = nil) {
            self.id = id
            self.specification = specification
            self.state = state
            self.result = result
        }
    }

    /// What can be proposed. `text` is the command as a group's log holds it.
    public enum Command: Sendable, Hashable, Codable {
        case submit(id: String, specification: String)
        case finish(id: String, result: String)
        /// Forgets a finished job (keeping the registry bounded is the job layer's call).
        case remove(id: String)

        public var text: String {
            // A Command is strings only: encoding cannot fail.
            String(decoding: try! JSONEncoder().encode(self), as: UTF8.self)
        }
    }

    /// What applying a command answered: its `RaftCommit.result`, decoded with
    /// `Outcome(result:)`.
    public enum Outcome: Sendable, Hashable, Codable {
        case submitted(Job)
        case alreadySubmitted(Job)
        case finished(Job)
        /// The job had finished already: `Job.result` is the first result, which stays.
        case alreadyFinished(Job)
        case removed(id: String)
        case refused(reason: String)

        /// Decodes a `RaftCommit.result` of this registry.
        public init(result: String) throws {
            self = try JSONDecoder().decode(Outcome.self, from: Data(result.utf8))
        }

        var text: String {
            // Strings and enums only: encoding cannot fail.
            String(decoding: try! JSONEncoder().encode(self), as: UTF8.self)
        }
    }

    public private(set) var jobs: [String: Job] = [:]

    public init() {}

    public mutating func apply(_ command: String) -> String {
        guard command.utf8.count <= 2 * Limits.maximumTextBytes + 1024,
              let decoded = try? JSONDecoder().decode(Command.self, from: Data(command.utf8)) else {
            return Outcome.refused(reason: "not a job registry command").text
        }
        return apply(decoded).text
    }

    private mutating func apply(_ command: Command) -> Outcome {
        switch command {
        case .submit(let id, let specification):
            if let refusal = Self.check(id: id) ?? Self.check(specification, "specification") { return .refused(reason: refusal) }
            if let job = jobs[id] {
                return job.specification == specification ? .alreadySubmitted(job) : .refused(reason: "job \(id) exists with another specification")
            }
            let job = Job(id: id, specification: specification)
            jobs[id] = job
            return .submitted(job)
        case .finish(let id, let result):
            if let refusal = Self.check(result, "result") { return .refused(reason: refusal) }
            guard var job = jobs[id] else { return .refused(reason: "no job \(id)") }
            if job.state == .finished { return .alreadyFinished(job) }
            job.state = .finished
            job.result = result
            jobs[id] = job
            return .finished(job)
        case .remove(let id):
            guard let job = jobs[id] else { return .refused(reason: "no job \(id)") }
            guard job.state == .finished else { return .refused(reason: "job \(id) is still running") }
            jobs[id] = nil
            return .removed(id: id)
        }
    }

    /// Running jobs, by id.
    public var running: [Job] { jobs.values.filter { $0.state == .running }.sorted { $0.id < $1.id } }

    private struct Snapshot: Codable {
        var version: Int
        var jobs: [Job]
    }

    public func snapshot() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        // Strings and enums only: encoding cannot fail.
        return String(decoding: try! encoder.encode(Snapshot(version: 1, jobs: jobs.values.sorted { $0.id < $1.id })), as: UTF8.self)
    }

    /// Why a snapshot is refused.
    public struct SnapshotError: Error, CustomStringConvertible {
        public var description: String
    }

    public mutating func restore(_ snapshot: String) throws {
        let decoded: Snapshot
        do {
            decoded = try JSONDecoder().decode(Snapshot.self, from: Data(snapshot.utf8))
        } catch {
            throw SnapshotError(description: "not a job registry snapshot: \(error)")
        }
        guard decoded.version == 1 else { throw SnapshotError(description: "job registry snapshot version \(decoded.version), this node reads version 1") }
        var restored: [String: Job] = [:]
        for job in decoded.jobs {
            guard restored.updateValue(job, forKey: job.id) == nil else { throw SnapshotError(description: "job \(job.id) is twice in the snapshot") }
        }
        jobs = restored
    }

    private static func check(id: String) -> String? {
        if id.isEmpty { return "a job id is empty" }
        if id.utf8.count > Limits.maximumIDLength { return "job id longer than \(Limits.maximumIDLength) bytes" }
        return nil
    }

    /// Why `text` is not a JSON text of at most `maximumTextBytes`, or nil.
    private static func check(_ text: String, _ what: String) -> String? {
        if text.utf8.count > Limits.maximumTextBytes { return "the \(what) is longer than \(Limits.maximumTextBytes) bytes" }
        guard JSONText.isValid(Array(text.utf8)) else {
            return "the \(what) is not JSON"
        }
        return nil
    }
}

extension RaftHost {
    /// Proposes a job registry command to `group` (a `ReplicatedJobRegistry`'s) and
    /// returns what applying it answered. Throws `RaftHostError` as `propose` does, or a
    /// decoding error if the group's state machine is not a job registry.
    public func propose(group: String, _ command: ReplicatedJobRegistry.Command) async throws -> ReplicatedJobRegistry.Outcome {
        try ReplicatedJobRegistry.Outcome(result: try await propose(group: group, command: command.text).result)
    }
}
