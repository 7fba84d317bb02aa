import FoundationEssentials
import SpokesCluster
import SpokesJobs
import SpokesReplication

/// The bike job's state as the job layer carries it in a job's group (Docs/one-job-layer.md):
/// batches of the ledger's events, as its run wrote them (``BikeEventsCodec``), applied
/// all or nothing.
extension BikeJobBook: JobWorkloadState {
    public mutating func apply(events bytes: ArraySlice<UInt8>) -> String? {
        // The form the run writes, by hand; any other spelling of the same array through
        // `Codable`.
        guard let events = BikeEventsCodec.decodeEvents(bytes) ?? (try? JSONDecoder().decode([Event].self, from: Data(bytes))) else {
            return "not a list of bike job events"
        }
        var book = self
        for (index, event) in events.enumerated() where !book.apply(event) {
            return "event \(index + 1) of \(events.count) did not apply"
        }
        self = book
        return nil
    }

    public func snapshot() -> String { MachineText.canonical(self) }

    /// Every user whose result counted or who ended, as its task's end: a run that takes
    /// the job over runs none of them again (its moves would be refused, the user
    /// finished). A counted user's end has an output (empty: the book holds what counts,
    /// as ``BikeJobRun/keptOutput(task:output:)`` keeps); a failed or cancelled one none.
    public func endedTasks() -> [Int: TaskJobReport.TaskEnd] {
        var ends: [Int: TaskJobReport.TaskEnd] = [:]
        for (user, entry) in entries.enumerated() {
            guard let ending = entry.end?.ending ?? entry.accepted else { continue }
            ends[user] = Self.taskEnd(of: user, ending: ending, entry: entry)
        }
        return ends
    }

    /// `user`'s end as a task's, ending with `ending`.
    static func taskEnd(of user: Int, ending: SimulationResult.Ending, entry: Entry) -> TaskJobReport.TaskEnd {
        let counted = ending != .failed && ending != .cancelled
        let failures = ending == .cancelled ? [JobRunner.Failure(attempt: entry.attempt, node: "", reason: "cancelled", cancelled: true)] : []
        return TaskJobReport.TaskEnd(JobRunner.Outcome(
            task: user, output: counted ? "" : nil, node: entry.end?.node, attempts: entry.end?.attempts ?? entry.attempt, failures: failures))
    }
}
