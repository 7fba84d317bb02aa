import SpokesTransport
/// One request, as the handler sees it: validated by ``HTTPRequestParser`` (or by this
/// type's initialiser), its target split into a percent-decoded path and query.
///
/// `path` is decoded but not normalised: `/a/../b` stays as it is, and `%2F` becomes a
/// `/` like any other. Match routes on it; never join it to a file system path.
public struct HTTPRequest: Sendable {
    /// One `name=value` pair of the query, both decoded, `+` read as a space.
    public struct QueryItem: Sendable, Hashable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    public var method: HTTPMethod
    /// The request target exactly as sent: `/status?node=a%20b`.
    public let target: String
    /// The target's path, percent-decoded: `/status`. `*` for `OPTIONS *`.
    public let path: String
    /// The query's pairs in order; a bare `name` has an empty value.
    public let queryItems: [QueryItem]
    public var version: HTTPVersion
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// The client's address, when the request came from a socket.
    public var remoteAddress: SocketAddress?

    /// A request for `target` (origin form, `/path?query`; absolute form,
    /// `http://host/path`; or `*`). Throws a `400` error when the target is not one of
    /// those or its percent-encoding is broken.
    public init(method: HTTPMethod = .get, target: String, version: HTTPVersion = .http1_1, headers: HTTPHeaders = [:],
                body: [UInt8] = [], remoteAddress: SocketAddress? = nil) throws(HTTPParseError) {
        let (path, queryItems) = try Self.decode(target: target, method: method)
        self.init(method: method, target: target, path: path, queryItems: queryItems, version: version, headers: headers,
                  body: body, remoteAddress: remoteAddress)
    }

    /// A request whose target has already been decoded (by ``decode(target:method:)``).
    init(method: HTTPMethod, target: String, path: String, queryItems: [QueryItem], version: HTTPVersion, headers: HTTPHeaders,
         body: [UInt8], remoteAddress: SocketAddress?) {
        self.method = method
        self.target = target
        self.path = path
        self.queryItems = queryItems
        self.version = version
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
    }

    /// Whether the client wants the connection kept open after the response: HTTP/1.1
    /// keeps it unless `Connection: close`; HTTP/1.0 closes it unless
    /// `Connection: keep-alive` (and no `close`).
    public var keepAlive: Bool {
        if headers.containsToken("close", in: "Connection") { return false }
        return version == .http1_1 || headers.containsToken("keep-alive", in: "Connection")
    }

    /// The decoded value of the first query item called `name` (case-sensitive).
    public func query(_ name: String) -> String? {
        queryItems.first { $0.name == name }?.value
    }

    /// The value of the first cookie called `name` (case-sensitive) in any `Cookie`
    /// field, without the double quotes a value may be wrapped in. Not percent-decoded:
    /// cookie values are whatever the server set.
    public func cookie(_ name: String) -> String? {
        for field in headers.values("Cookie") {
            for pair in field.split(separator: ";") {
                let trimmed = pair.drop { $0 == " " || $0 == "\t" }
                guard let equals = trimmed.firstIndex(of: "="), trimmed[..<equals] == name else { continue }
                let value = trimmed[trimmed.index(after: equals)...]
                if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { return String(value.dropFirst().dropLast()) }
                return String(value)
            }
        }
        return nil
    }

    /// The decoded path and query of `target`.
    static func decode(target: String, method: HTTPMethod) throws(HTTPParseError) -> (String, [QueryItem]) {
        var bytes = Substring(target).utf8[...]
        guard !bytes.isEmpty, bytes.allSatisfy(HTTPSyntax.isTargetByte) else {
            throw .badRequest("the request target must be visible ASCII, without spaces")
        }
        if bytes.elementsEqual("*".utf8) {
            guard method == .options else { throw .badRequest("the target '*' is only for OPTIONS") }
            return ("*", [])
        }
        if bytes.first != UInt8(ascii: "/") {
            guard let rest = afterScheme(bytes) else {
                throw .badRequest("the request target must start with '/' or 'http://'")
            }
            guard let slash = rest.firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") }) else { return ("/", []) }
            bytes = rest[slash...]
        }
        let question = bytes.firstIndex(of: UInt8(ascii: "?"))
        let pathBytes = bytes[..<(question ?? bytes.endIndex)]
        guard let path = HTTPSyntax.percentDecoded(pathBytes, plusIsSpace: false), !path.utf8.contains(0) else {
            throw .badRequest("the path has a broken percent-escape, an encoded NUL, or is not UTF-8")
        }
        var items: [QueryItem] = []
        if let question {
            let query = bytes[bytes.index(after: question)...]
            for pair in query.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
                let equals = pair.firstIndex(of: UInt8(ascii: "="))
                let valueStart = equals.map(pair.index(after:)) ?? pair.endIndex
                guard let name = HTTPSyntax.percentDecoded(pair[..<(equals ?? pair.endIndex)], plusIsSpace: true),
                      let value = HTTPSyntax.percentDecoded(pair[valueStart...], plusIsSpace: true)
                else {
                    throw .badRequest("the query has a broken percent-escape or is not UTF-8")
                }
                items.append(QueryItem(name: name, value: value))
            }
        }
        return (path, items)
    }

    /// What follows `http://` or `https://` (any case) in an absolute-form target.
    private static func afterScheme(_ bytes: Substring.UTF8View.SubSequence) -> Substring.UTF8View.SubSequence? {
        for scheme in ["http://", "https://"] where bytes.count > scheme.utf8.count {
            let prefix = bytes.prefix(scheme.utf8.count)
            if zip(prefix, scheme.utf8).allSatisfy({ HTTPSyntax.lowercased($0) == $1 }) {
                return bytes.dropFirst(scheme.utf8.count)
            }
        }
        return nil
    }
}
