import FoundationEssentials
import Glibc

/// Where a command writes and what environment it reads, so tests can capture what it
/// prints and give it variables (such as `SPOKES_SECRET`) without changing the process's.
public struct CommandContext: Sendable {
    /// Writes exactly the given text to standard output (the caller adds newlines).
    public var standardOutput: @Sendable (String) -> Void
    /// Writes exactly the given text to standard error.
    public var standardError: @Sendable (String) -> Void
    /// Whether standard error is a terminal, where a live progress line makes sense.
    public var standardErrorIsTerminal: Bool
    /// The environment variables the command sees.
    public var environment: [String: String]

    public init(
        standardOutput: @escaping @Sendable (String) -> Void,
        standardError: @escaping @Sendable (String) -> Void,
        standardErrorIsTerminal: Bool,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.standardOutput = standardOutput
        self.standardError = standardError
        self.standardErrorIsTerminal = standardErrorIsTerminal
        self.environment = environment
    }

    /// The process's own stdout and stderr, written unbuffered.
    public static var process: CommandContext {
        CommandContext(
            standardOutput: { writeAll($0, to: STDOUT_FILENO) },
            standardError: { writeAll($0, to: STDERR_FILENO) },
            standardErrorIsTerminal: isatty(STDERR_FILENO) == 1)
    }

    private static func writeAll(_ text: String, to descriptor: Int32) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            bytes = bytes.dropFirst(written)
        }
    }
}
