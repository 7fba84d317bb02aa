import Synchronization

/// The last few bike jobs read from their spec's parameters, in this process. A job's
/// text (the whole network, about 100 KB for Milano) is read on every replica when its
/// group commits the start, and the coordinator's run reads the same text again: with
/// this memo, once. Decoding took a sixth of a small job's CPU on three nodes (`perf`,
/// 5-user jobs, 2026-11-28), on the protocol thread for the start.
///
/// Invariant: an entry's job is what `BikeWorkload.job(from:)` reads from its text
/// (checked), so a hit returns exactly what a decode would. Reading is pure, so nodes
/// that share a process (the simulator) share entries without changing a trace.
final class DecodedBikeJobs: Sendable {
    /// The process's memo.
    static let shared = DecodedBikeJobs(keeping: 4)

    private let keeping: Int
    /// Newest last. Texts compare by length first, then bytes (the same storage at once).
    private let entries = Mutex<[(text: String, job: BikeJob)]>([])

    init(keeping: Int) {
        self.keeping = max(1, keeping)
    }

    /// The job `text` holds: remembered, or read by `read` (and remembered if it reads;
    /// a text that does not read is not remembered, and throws each time).
    func job(from text: String, read: (String) throws -> BikeJob) throws -> BikeJob {
        if let known = entries.withLock({ $0.last { $0.text == text }?.job }) { return known }
        let job = try read(text)
        entries.withLock { entries in
            entries.removeAll { $0.text == text }
            entries.append((text, job))
            if entries.count > keeping { entries.removeFirst(entries.count - keeping) }
        }
        return job
    }
}
