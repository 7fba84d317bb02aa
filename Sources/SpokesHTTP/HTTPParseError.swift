/// Why a request cannot be served as sent: the status to answer with and a reason a
/// person can act on. After answering, the server closes the connection, since it can no
/// longer tell where the next request would begin.
public struct HTTPParseError: Error, Sendable, Hashable, CustomStringConvertible {
    public let status: HTTPStatus
    public let reason: String

    public init(_ status: HTTPStatus, _ reason: String) {
        self.status = status
        self.reason = reason
    }

    public var description: String { "\(status): \(reason)" }

    static func badRequest(_ reason: String) -> HTTPParseError { HTTPParseError(.badRequest, reason) }
}
