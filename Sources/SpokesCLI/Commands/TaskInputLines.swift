import FoundationEssentials
import SpokesCluster
import SpokesConcurrency

/// Task inputs read from JSON lines: one input per line that is not blank, each checked
/// before any task runs, and each with the line it came from, so a bad one is named
/// (`inputs.jsonl:3: ...`).
struct TaskInputLines: Sendable {
    /// One input and where it came from.
    struct Line: Sendable, Hashable {
        /// 1-based.
        var number: Int
        /// The input's JSON, without surrounding whitespace.
        var json: String
    }

    /// A line that cannot be a task's input.
    struct Problem: Error, CustomStringConvertible {
        var source: String
        var line: Int
        var reason: String
        var description: String { "\(source):\(line): \(reason)" }
    }

    /// The most inputs one run takes.
    static let maximumCount = 10_000_000

    let source: String
    let lines: [Line]

    /// The inputs in `text` (from `source`, a file name or `stdin`). Every line is valid
    /// JSON within the size (``TaskLimits``) and shape limits of `settings`; when `registry`
    /// runs `kind`, it also decodes as the kind's input and passes its validation.
    init(_ text: String, source: String, kind: String, registry: TaskRegistry, settings: ClusterSettings) throws(Problem) {
        self.source = source
        let limit = TaskLimits.maximumDataBytes(frameBytes: settings.maximumFrameSize)
        let known = registry.contains(kind)
        var lines: [Line] = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let json = raw.trimmingWhitespace()
            if json.isEmpty { continue }
            let number = index + 1
            func problem(_ reason: String) -> Problem { Problem(source: source, line: number, reason: reason) }
            guard lines.count < Self.maximumCount else { throw problem("more than \(Self.maximumCount) inputs; split them over several runs") }
            let bytes = Array(json.utf8)
            guard bytes.count <= limit else {
                throw problem(TaskError.inputTooLarge(kind: kind, bytes: bytes.count, limit: limit).description)
            }
            do {
                try settings.jsonLimits.check(bytes)
            } catch {
                throw problem("\(error)")
            }
            guard JSONText.isValid(bytes) else { throw problem("not valid JSON (one input per line, e.g. {\"samples\": 1000, \"seed\": 1})") }
            if known {
                do {
                    try registry.check(kind: kind, input: json, settings: settings)
                } catch {
                    throw problem("\(error)")
                }
            }
            lines.append(Line(number: number, json: json))
        }
        self.lines = lines
    }
}
