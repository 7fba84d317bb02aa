import FoundationEssentials
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
}
