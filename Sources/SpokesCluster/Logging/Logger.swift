import FoundationEssentials
import Glibc
import SpokesConcurrency
import Synchronization

/// How much a log line matters.
public enum LogLevel: String, Sendable, Hashable, Comparable, CaseIterable, Codable {
    case debug, info, warning, error

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// One thing a node logged: when (wall clock), how much it matters, whose it is (the
/// node's name) and what happened.
public struct LogRecord: Sendable, Hashable {
    public var time: Date
    public var level: LogLevel
    public var label: String
    public var message: String

    public init(time: Date, level: LogLevel, label: String, message: String) {
        self.time = time
        self.level = level
        self.label = label
        self.message = message
    }

    /// `2026-03-04T22:58:46.123Z INFO    [node-1] message`: an ISO-8601 UTC time, the level
    /// and the label, so lines from several nodes sort and grep alike.
    public var line: String {
        let level = level.rawValue.uppercased().padded(to: 7)
        return "\(UTCTime.iso8601(time, milliseconds: true)) \(level) [\(label)] \(message)"
    }
}

/// Where a node's log goes. Libraries never write to stderr themselves: whoever makes a
/// node gives it a logger (the command line binds stderr, tests bind a ``LogMemory``
/// they can assert on), in the spirit of swift-log. The default, ``discard``, drops
/// everything.
public struct Logger: Sendable {
    /// The name every record carries, e.g. the node's.
    public var label: String
    /// Records below this level are dropped before they are formatted.
    public var minimumLevel: LogLevel
    private let sink: @Sendable (LogRecord) -> Void
    private let clock: @Sendable () -> Date

    /// A logger that hands every record at or above `minimumLevel` to `sink`; `clock`
    /// gives each record its time.
    public init(label: String = "", minimumLevel: LogLevel = .info,
                clock: @escaping @Sendable () -> Date = { Date(timeIntervalSince1970: RealClock().unixNow) }, sink: @escaping @Sendable (LogRecord) -> Void) {
        self.label = label
        self.minimumLevel = minimumLevel
        self.clock = clock
        self.sink = sink
    }

    /// Drops everything.
    public static let discard = Logger(minimumLevel: .error) { _ in }

    /// Writes each record as one ``LogRecord/line`` (plus a newline) with `write`, e.g.
    /// to stderr.
    public static func lines(minimumLevel: LogLevel = .info, _ write: @escaping @Sendable (String) -> Void) -> Logger {
        Logger(minimumLevel: minimumLevel) { write($0.line + "\n") }
    }

    /// The same logger with its records' times from `clock` (a node's runtime's: virtual
    /// in the simulator).
    public func timed(by clock: any RuntimeClock) -> Logger {
        Logger(label: label, minimumLevel: minimumLevel, clock: { Date(timeIntervalSince1970: clock.unixNow) }, sink: sink)
    }

    /// The same logger with another label.
    public func labeled(_ label: String) -> Logger {
        var copy = self
        copy.label = label
        return copy
    }

    public func log(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard level >= minimumLevel else { return }
        sink(LogRecord(time: clock(), level: level, label: label, message: message()))
    }

    public func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
    public func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    public func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
    public func error(_ message: @autoclosure () -> String) { log(.error, message()) }
}

/// A log kept in memory, for tests: bind ``logger`` to a node and assert on ``records``.
public final class LogMemory: Sendable {
    private let kept = Mutex<[LogRecord]>([])

    public init() {}

    /// A logger (every level) that keeps its records here.
    public var logger: Logger {
        Logger(minimumLevel: .debug) { [self] record in kept.withLock { $0.append(record) } }
    }

    /// Everything logged so far, in order.
    public var records: [LogRecord] { kept.withLock { $0 } }

    /// The messages logged so far, in order.
    public var messages: [String] { records.map(\.message) }
}
