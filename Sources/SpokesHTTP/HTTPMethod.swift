/// A request method: any RFC 9110 token, compared case-sensitively (`get` is not `GET`).
/// The server accepts every well-formed method; answering `405` or `501` to the ones a
/// route does not serve is the handler's choice.
public struct HTTPMethod: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String

    /// Nil unless `rawValue` is a non-empty token (letters, digits and ``!#$%&'*+-.^_`|~``).
    public init?(rawValue: String) {
        guard !rawValue.isEmpty, rawValue.utf8.allSatisfy(HTTPSyntax.isTokenByte) else { return nil }
        self.rawValue = rawValue
    }

    private init(known: String) {
        rawValue = known
    }

    public var description: String { rawValue }

    public static let get = HTTPMethod(known: "GET")
    public static let head = HTTPMethod(known: "HEAD")
    public static let post = HTTPMethod(known: "POST")
    public static let put = HTTPMethod(known: "PUT")
    public static let delete = HTTPMethod(known: "DELETE")
    public static let patch = HTTPMethod(known: "PATCH")
    public static let options = HTTPMethod(known: "OPTIONS")
    public static let connect = HTTPMethod(known: "CONNECT")
}
