import FoundationEssentials
import Synchronization

/// The reports a ``JobStore`` decoded last, each kept with the bytes it was decoded from,
/// so a report asked for again is not decoded again. A stored report's JSON holds every
/// task's end, and decoding it was most of the cost of answering for it, while clients
/// ask for the same few reports over and over: `spokes result --wait`, each member
/// answering a `locate`, the simulator's checks.
///
/// What it keeps true: a value is returned only for the very bytes it was decoded from,
/// compared whole, so it is always what decoding the stored line now would give (a line
/// that compaction or another process rewrote differently is decoded afresh). A value
/// is kept by its job, the key its report is stored under and its type, and the caller's
/// `decode` must be the one way that type is made of such a report.
///
/// Bounded, so a node's memory does not grow with what it was asked: the ``capacity``
/// most recently decoded reports whose JSON is at most ``largestKept`` bytes.
final class DecodedReports: Sendable {
    /// How many decoded reports are kept.
    static let capacity = 8
    /// The largest report JSON whose decoding is kept, in bytes (a bike job of many
    /// users is read rarely, and kept whole it would outweigh the rest of an idle node).
    static let largestKept = 1 << 20

    private struct Key: Hashable {
        var job: String
        var recordKey: String
        var type: ObjectIdentifier
    }

    private struct Kept {
        var source: Data
        var value: any Sendable
    }

    private struct State {
        var kept: [Key: Kept] = [:]
        /// The keys of ``kept``, oldest first.
        var order: [Key] = []
    }

    private let state = Mutex(State())

    /// `source`, the JSON of `job`'s report stored under `recordKey`, as `decode` makes
    /// it: the value kept for these bytes, or `decode`'s (kept for next time), or nil
    /// when `decode` gives nil.
    func value<Value: Sendable>(of job: String, recordKey: String, source: Data, decode: (Data) -> Value?) -> Value? {
        let key = Key(job: job, recordKey: recordKey, type: ObjectIdentifier(Value.self))
        if let kept = state.withLock({ $0.kept[key] }), kept.source == source, let value = kept.value as? Value {
            return value
        }
        // Decoded outside the lock: the store's readers (blocking threads) do not wait on
        // one another's decoding.
        guard let value = decode(source) else { return nil }
        guard source.count <= Self.largestKept else { return value }
        state.withLock { state in
            if state.kept.updateValue(Kept(source: source, value: value), forKey: key) == nil {
                state.order.append(key)
            }
            while state.order.count > Self.capacity {
                state.kept.removeValue(forKey: state.order.removeFirst())
            }
        }
        return value
    }
}
