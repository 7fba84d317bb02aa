/// An operation did not finish within its deadline.
public struct TimeoutError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The deadline that passed, in seconds.
    public let seconds: Double

    public init(seconds: Double) {
        self.seconds = seconds
    }

    public var description: String { "timed out after \(seconds) seconds" }
}
