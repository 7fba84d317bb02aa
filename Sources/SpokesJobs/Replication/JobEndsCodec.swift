import FoundationEssentials
import SpokesCluster

/// The task ends of a job batch, `"ends": [{"task": N, "end": {...}}]` (``JobMachine/batch(epoch:events:ends:)``),
/// written and read by hand (issue 33, "the price of one call"): the coordinator writes
/// one array per batch of its stream and every replica, its own included, reads it back
/// to apply it. Through `JSONEncoder` and `JSONDecoder` that was 3.8 M instructions a
/// batch of 50 ends, more than writing and applying the batch's bike events at 2 moves
/// a user (callgrind, release): the likely part of the 3-8% more CPU per move a bike
/// job's coordinator spent once the ends were replicated beside the events.
///
/// The form is the JSON `Codable` makes of `[JobMachine.Ended]`, keys in their declared
/// order (`task`, `end`; `output` and `node` left out when nil, `attempts`, `failures`;
/// a failure's `attempt`, `node`, `reason`, `cancelled`), strings and numbers as
/// ``HandJSON`` writes them, so a replica or log of an earlier release reads what is
/// written here as the same value. ``decode(_:)`` reads that exact form by hand and gives
/// anything else to `JSONDecoder`, as before (another spacing or key order, such as an
/// earlier release's `JSONEncoder` writes: it orders keys differently from one encoding
/// to the next; `null` for a missing string; a number with a fraction): a faster way to
/// the same value or the same error, never another.
enum JobEndsCodec {
    /// `ends` as the JSON array `JSONDecoder` reads as them, appended to `out`.
    static func write(_ ends: [JobMachine.Ended], to out: inout [UInt8]) { HandJSON.array(ends, to: &out, write) }

    private static func write(_ ended: JobMachine.Ended, to out: inout [UInt8]) {
        out += Key.task
        HandJSON.integer(ended.task, to: &out)
        out += Key.end
        let end = ended.end
        if let output = end.output {
            out += Key.output
            HandJSON.string(output, to: &out)
            out.append(UInt8(ascii: ","))
        }
        if let node = end.node {
            out += Key.node
            HandJSON.string(node, to: &out)
            out.append(UInt8(ascii: ","))
        }
        out += Key.attempts
        HandJSON.integer(end.attempts, to: &out)
        out += Key.failures
        HandJSON.array(end.failures, to: &out, write)
        out += Key.close
    }

    private static func write(_ failure: JobRunner.Failure, to out: inout [UInt8]) {
        out += Key.attempt
        HandJSON.integer(failure.attempt, to: &out)
        out += Key.failureNode
        HandJSON.string(failure.node, to: &out)
        out += Key.reason
        HandJSON.string(failure.reason, to: &out)
        out += Key.cancelled
        HandJSON.bool(failure.cancelled, to: &out)
        out.append(UInt8(ascii: "}"))
    }

    /// The ends of the JSON array `bytes`: read by hand when it is in exactly the form
    /// ``write(_:to:)`` writes, else by `JSONDecoder` (whose error it throws).
    static func decode(_ bytes: ArraySlice<UInt8>) throws -> [JobMachine.Ended] {
        if let ends = readByHand(bytes) { return ends }
        return try JSONDecoder().decode([JobMachine.Ended].self, from: Data(bytes))
    }

    /// The ends of an array in exactly the form ``write(_:to:)`` writes; nil otherwise
    /// (then `JSONDecoder` reads it, or refuses it).
    static func readByHand(_ bytes: ArraySlice<UInt8>) -> [JobMachine.Ended]? {
        var reader = HandJSON.Reader(bytes: bytes)
        guard let ends = reader.array(readEnded), reader.atEnd else { return nil }
        return ends
    }

    private static func readEnded(_ reader: inout HandJSON.Reader) -> JobMachine.Ended? {
        guard reader.literal(Key.task), let task = reader.integer(), reader.literal(Key.end) else { return nil }
        var output: String?, node: String?
        if reader.literal(Key.output) {
            guard let text = reader.string(), reader.byte(UInt8(ascii: ",")) else { return nil }
            output = text
        }
        if reader.literal(Key.node) {
            guard let text = reader.string(), reader.byte(UInt8(ascii: ",")) else { return nil }
            node = text
        }
        guard reader.literal(Key.attempts), let attempts = reader.integer(), reader.literal(Key.failures), let failures = reader.array(readFailure),
              reader.literal(Key.close) else { return nil }
        let outcome = JobRunner.Outcome(task: task, output: output, node: node, attempts: attempts, failures: failures)
        return JobMachine.Ended(task: task, end: TaskJobReport.TaskEnd(outcome))
    }

    private static func readFailure(_ reader: inout HandJSON.Reader) -> JobRunner.Failure? {
        guard reader.literal(Key.attempt), let attempt = reader.integer(), reader.literal(Key.failureNode), let node = reader.string(),
              reader.literal(Key.reason), let reason = reader.string(), reader.literal(Key.cancelled), let cancelled = reader.bool(),
              reader.byte(UInt8(ascii: "}")) else { return nil }
        return JobRunner.Failure(attempt: attempt, node: node, reason: reason, cancelled: cancelled)
    }

    /// The fixed text between the values.
    private enum Key {
        static let task = Array(#"{"task":"#.utf8)
        static let end = Array(#","end":{"#.utf8)
        static let output = Array(#""output":"#.utf8)
        static let node = Array(#""node":"#.utf8)
        static let attempts = Array(#""attempts":"#.utf8)
        static let failures = Array(#","failures":"#.utf8)
        static let attempt = Array(#"{"attempt":"#.utf8)
        static let failureNode = Array(#","node":"#.utf8)
        static let reason = Array(#","reason":"#.utf8)
        static let cancelled = Array(#","cancelled":"#.utf8)
        /// The end's and the entry's closing braces.
        static let close = Array("}}".utf8)
    }
}
