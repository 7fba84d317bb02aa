import FoundationEssentials
import Glibc

/// What a handler answers: a status, headers, and a body of bytes or an event stream.
///
/// The server owns the framing: ``serialized(for:keepAlive:date:)`` sets
/// `Content-Length`, `Connection` and (for streams) `Content-Type` and `Cache-Control`
/// itself, and drops any `Transfer-Encoding`, `Content-Length`, `Connection` or
/// `Keep-Alive` a handler set, so a response can never describe its own length wrongly.
public struct HTTPResponse: Sendable {
    /// The body: bytes sent with a `Content-Length`, or an event stream that runs until it
    /// is finished or the client goes away (and then closes the connection).
    public enum Body: Sendable {
        case bytes([UInt8])
        case stream(HTTPEventStream)
    }

    public var status: HTTPStatus
    public var headers: HTTPHeaders
    public var body: Body

    public init(status: HTTPStatus = .ok, headers: HTTPHeaders = [:], body: Body = .bytes([])) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// Plain UTF-8 text.
    public static func text(_ text: String, status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: .bytes(Array(text.utf8)))
    }

    /// An HTML page.
    public static func html(_ html: String, status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "text/html; charset=utf-8"], body: .bytes(Array(html.utf8)))
    }

    /// JSON already encoded.
    public static func json(bytes: some Sequence<UInt8>, status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: .bytes(Array(bytes)))
    }

    /// `value` encoded as JSON. If it cannot be encoded (a non-finite number, a failing
    /// custom `encode(to:)`), the answer is a `500` naming the encoding error instead,
    /// so a handler need not handle an error it cannot do anything about.
    public static func json(_ value: some Encodable, status: HTTPStatus = .ok, encoder: JSONEncoder = JSONEncoder()) -> HTTPResponse {
        do {
            return json(bytes: try encoder.encode(value), status: status)
        } catch {
            return text("cannot encode the response as JSON: \(error)\n", status: .internalServerError)
        }
    }

    /// A redirect to `location` (`303 See Other` unless told otherwise). Bytes that cannot
    /// appear in a header (spaces, CR, LF, non-ASCII) are percent-encoded, so a location
    /// built from client input cannot split the response.
    public static func redirect(to location: String, status: HTTPStatus = .seeOther) -> HTTPResponse {
        var encoded = ""
        for byte in location.utf8 {
            if HTTPSyntax.isTargetByte(byte) {
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                encoded += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        var response = text("See \(encoded)\n", status: status)
        response.headers.add(name: "Location", value: encoded)
        return response
    }

    /// A Server-Sent Events response carrying `stream`.
    public static func eventStream(_ stream: HTTPEventStream, headers: HTTPHeaders = [:]) -> HTTPResponse {
        HTTPResponse(status: .ok, headers: headers, body: .stream(stream))
    }

    /// True when the handler asked for the connection to close (`Connection: close`).
    var asksToClose: Bool { headers.containsToken("close", in: "Connection") }

    var stream: HTTPEventStream? {
        if case .stream(let stream) = body { return stream }
        return nil
    }

    /// The bytes to send in answer to `request` (nil for an answer to bytes that were not
    /// a request): the status line, the headers and, unless the request was `HEAD`, the
    /// status forbids one, or the body is a stream, the body.
    ///
    /// The status line always says `HTTP/1.1`, as RFC 9110 §6.2 asks of a 1.1 server,
    /// also to a 1.0 client. An event stream always closes the connection afterwards, so
    /// it is sent with `Connection: close` whatever `keepAlive` says. Header fields whose
    /// name is not a token or whose value holds CR, LF or another control byte are left
    /// out rather than sent: they would corrupt or split the response.
    public func serialized(for request: HTTPRequest?, keepAlive: Bool, date: Date? = nil) -> [UInt8] {
        var headers = headers
        for framing in ["Connection", "Keep-Alive", "Transfer-Encoding", "Content-Length"] { headers.remove(framing) }
        let closing: Bool
        switch body {
        case .bytes(let bytes):
            if !status.forbidsBody { headers.add(name: "Content-Length", value: String(bytes.count)) }
            closing = !keepAlive
        case .stream:
            headers.replaceOrAdd(name: "Content-Type", value: "text/event-stream")
            headers.replaceOrAdd(name: "Cache-Control", value: "no-store")
            closing = true
        }
        if closing {
            headers.add(name: "Connection", value: "close")
        } else if request?.version == .http1_0 {
            headers.add(name: "Connection", value: "keep-alive")
        }
        if let date, !headers.contains("Date") { headers.add(name: "Date", value: Self.httpDate(date)) }

        let code = (100...999).contains(status.code) ? status.code : 500
        let reason = String(decoding: status.reasonPhrase.utf8.filter(HTTPSyntax.isFieldValueByte), as: UTF8.self)
        var bytes = Array("HTTP/1.1 \(code) \(reason)\r\n".utf8)
        for field in headers where Self.isSafe(field) {
            bytes += field.name.utf8
            bytes += ": ".utf8
            bytes += field.value.utf8
            bytes += "\r\n".utf8
        }
        bytes += "\r\n".utf8
        if case .bytes(let body) = body, request?.method != .head, !status.forbidsBody {
            bytes += body
        }
        return bytes
    }

    /// True when a header field can be sent as is: a token for a name, no control bytes
    /// (CR, LF, NUL) in the value.
    private static func isSafe(_ field: HTTPHeaders.Element) -> Bool {
        !field.name.isEmpty && field.name.utf8.allSatisfy(HTTPSyntax.isTokenByte) && field.value.utf8.allSatisfy(HTTPSyntax.isFieldValueByte)
    }

    /// `date` in the IMF-fixdate form of RFC 9110 §5.6.7: `Sun, 06 Nov 1994 08:49:37 GMT`.
    /// Formatted by hand, so no locale can change it.
    public static func httpDate(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { String(value).leftPadded(to: 2) }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}

extension String {
    /// Zeros before the string up to `width` characters.
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
