/// A response status: the code, which clients act on, and the reason phrase sent after
/// it, which they ignore. Two statuses are equal when their codes are.
public struct HTTPStatus: Sendable, Hashable, CustomStringConvertible {
    public let code: Int
    public let reasonPhrase: String

    public init(code: Int, reasonPhrase: String) {
        self.code = code
        self.reasonPhrase = reasonPhrase
    }

    /// The status with `code` and its standard reason phrase (RFC 9110), or "Status" for
    /// codes this type has no name for.
    public init(code: Int) {
        self.init(code: code, reasonPhrase: Self.known.first { $0.code == code }?.reasonPhrase ?? "Status")
    }

    public var description: String { "\(code) \(reasonPhrase)" }

    public static func == (lhs: HTTPStatus, rhs: HTTPStatus) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// True for 1xx, 204 and 304: responses that never carry a body.
    var forbidsBody: Bool { code < 200 || code == 204 || code == 304 }

    public static let `continue` = HTTPStatus(code: 100, reasonPhrase: "Continue")
    public static let ok = HTTPStatus(code: 200, reasonPhrase: "OK")
    public static let noContent = HTTPStatus(code: 204, reasonPhrase: "No Content")
    public static let movedPermanently = HTTPStatus(code: 301, reasonPhrase: "Moved Permanently")
    public static let found = HTTPStatus(code: 302, reasonPhrase: "Found")
    public static let seeOther = HTTPStatus(code: 303, reasonPhrase: "See Other")
    public static let notModified = HTTPStatus(code: 304, reasonPhrase: "Not Modified")
    public static let badRequest = HTTPStatus(code: 400, reasonPhrase: "Bad Request")
    public static let unauthorized = HTTPStatus(code: 401, reasonPhrase: "Unauthorized")
    public static let forbidden = HTTPStatus(code: 403, reasonPhrase: "Forbidden")
    public static let notFound = HTTPStatus(code: 404, reasonPhrase: "Not Found")
    public static let methodNotAllowed = HTTPStatus(code: 405, reasonPhrase: "Method Not Allowed")
    public static let requestTimeout = HTTPStatus(code: 408, reasonPhrase: "Request Timeout")
    public static let lengthRequired = HTTPStatus(code: 411, reasonPhrase: "Length Required")
    public static let contentTooLarge = HTTPStatus(code: 413, reasonPhrase: "Content Too Large")
    public static let uriTooLong = HTTPStatus(code: 414, reasonPhrase: "URI Too Long")
    public static let requestHeaderFieldsTooLarge = HTTPStatus(code: 431, reasonPhrase: "Request Header Fields Too Large")
    public static let internalServerError = HTTPStatus(code: 500, reasonPhrase: "Internal Server Error")
    public static let notImplemented = HTTPStatus(code: 501, reasonPhrase: "Not Implemented")
    public static let serviceUnavailable = HTTPStatus(code: 503, reasonPhrase: "Service Unavailable")
    public static let httpVersionNotSupported = HTTPStatus(code: 505, reasonPhrase: "HTTP Version Not Supported")

    private static let known: [HTTPStatus] = [
        .continue, .ok, .noContent, .movedPermanently, .found, .seeOther, .notModified, .badRequest, .unauthorized,
        .forbidden, .notFound, .methodNotAllowed, .requestTimeout, .lengthRequired, .contentTooLarge, .uriTooLong,
        .requestHeaderFieldsTooLarge, .internalServerError, .notImplemented, .serviceUnavailable, .httpVersionNotSupported,
    ]
}
