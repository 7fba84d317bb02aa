import FoundationEssentials
import Glibc
import SpokesCluster

/// How `spokes node` writes its log to stderr: `text`, one line a record as people read
/// it (``LogRecord/line``), or `json`, one JSON object a line for log collectors
/// (`{"level":"info","message":"...","node":"n1","time":"2026-11-27T01:20:12.345Z"}`).
public enum LogFormat: String, Sendable, CaseIterable {
    case text
    case json

    /// `--log-format text|json` (default text).
    static let option = Option.parsed("log-format", "FORMAT", help: "How the log on stderr is written: text, or json (one object a line, for log collectors).",
                                      range: "text or json", defaultText: "text") { text throws(UsageError) -> LogFormat in
        guard let format = LogFormat(rawValue: text) else { throw UsageError("--log-format must be text or json, got '\(text)'") }
        return format
    }

    /// A logger that writes each record in this format, a line each, with `write`.
    public func logger(_ write: @escaping @Sendable (String) -> Void) -> Logger {
        switch self {
        case .text: .lines(write)
        case .json: Logger { write(Self.json($0) + "\n") }
        }
    }

    /// One record as one line of JSON (no line feed in it: a message's own are escaped).
    public static func json(_ record: LogRecord) -> String {
        struct Line: Encodable {
            var time: String
            var level: String
            var node: String
            var message: String
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let line = Line(time: UTCTime.iso8601(record.time, milliseconds: true), level: record.level.rawValue, node: record.label, message: record.message)
        guard let data = try? encoder.encode(line) else { return #"{"level":"error","message":"unencodable log record"}"# }
        return String(decoding: data, as: UTF8.self)
    }
}
