/// A command line that does not fit the command: the tool prints the message with the
/// command's usage and exits with status 2. The message names the flag or argument at
/// fault, e.g. `--users expects an integer, got 'abc'`.
///
/// Commands throw these too, for rules that span flags
/// (`--network cannot be combined with --stations`).
public struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
