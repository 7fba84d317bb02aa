/// Turns the bytes of a connection into requests, sans-IO: feed it whatever arrived, then
/// take complete requests out, in order (several may wait in one buffer: pipelining).
/// It never reads a socket or a clock; the server adds the timeouts.
///
/// It follows RFC 9112, strictly where leniency lets a request be read two ways
/// (request smuggling), and says why it refuses (``HTTPParseError``):
/// - Lines end with CRLF or a bare LF (RFC 9112 §2.2 lets a server accept LF alone,
///   and tools typing requests by hand send it); a bare CR anywhere is an error.
/// - Empty lines before a request line are skipped (§2.2); they count toward the head.
/// - The request line is `method SP target SP version` with single spaces; the method is
///   a token; `HTTP/1.x` with x > 1 is read as HTTP/1.1, any other major version is 505.
/// - Header lines are `name: value` with no whitespace before the colon; obs-fold
///   continuation lines, NUL, CR, LF and other control bytes are refused.
/// - HTTP/1.1 needs exactly one valid `Host`. A body needs one `Content-Length` (the same
///   length twice is refused too); any `Transfer-Encoding` is `501` (`400` on HTTP/1.0),
///   so a body's end is never a matter of interpretation.
///
/// Memory stays bounded: the head is refused as soon as it outgrows its limit, before its
/// end arrives, and a body over the limit is refused as soon as its length is known, before
/// any of it is buffered. Once it has thrown, the parser keeps throwing the same error: the
/// rest of the stream cannot be trusted.
public struct HTTPRequestParser: Sendable {
    public let limits: HTTPLimits

    private var buffer: [UInt8] = []
    /// Where the request being parsed begins in `buffer`; everything before it is consumed.
    private var start = 0
    private var head = HeadProgress()
    private var pendingBody: PendingBody?
    private var failure: HTTPParseError?

    /// How far the scan of the current head has come. Offsets count from `start`, so
    /// they survive compaction of the buffer, and no byte is scanned twice.
    private struct HeadProgress {
        var scanned = 0
        var lineStart = 0
        var requestLine: RequestLine?
        var headers = HTTPHeaders()
    }

    private struct RequestLine {
        var method: HTTPMethod
        var target: String
        var path: String
        var queryItems: [HTTPRequest.QueryItem]
        var version: HTTPVersion
    }

    /// A request whose head is complete, waiting for `length` body bytes.
    private struct PendingBody {
        var request: HTTPRequest
        var length: Int
        var continueDue: Bool
    }

    public init(limits: HTTPLimits = HTTPLimits()) {
        self.limits = limits
    }

    /// Bytes received and not yet returned as part of a request.
    public var bufferedByteCount: Int { buffer.count - start }

    /// True while part of a request has arrived but not all of it.
    public var hasPartialRequest: Bool { bufferedByteCount > 0 || pendingBody != nil }

    public mutating func feed<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
        if start > 0, start * 2 >= buffer.count {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete request, or nil when more bytes are needed.
    public mutating func nextRequest() throws(HTTPParseError) -> HTTPRequest? {
        if let failure { throw failure }
        do {
            return try parseNext()
        } catch {
            failure = error
            throw error
        }
    }

    /// True once for a request that asked `Expect: 100-continue` and whose body has not
    /// all arrived: the caller should now send `HTTP/1.1 100 Continue`, so the client
    /// sends the body without waiting for its own timeout.
    public mutating func shouldSendContinue() -> Bool {
        guard let pending = pendingBody, pending.continueDue, bufferedByteCount < pending.length else { return false }
        pendingBody?.continueDue = false
        return true
    }

    private mutating func parseNext() throws(HTTPParseError) -> HTTPRequest? {
        if pendingBody == nil {
            guard let headOnly = try scanHead() else { return nil }
            let length = try bodyLength(of: headOnly)
            guard length > 0 else { return headOnly }
            let expectsContinue = headOnly.version == .http1_1 && headOnly.headers.containsToken("100-continue", in: "Expect")
            pendingBody = PendingBody(request: headOnly, length: length, continueDue: expectsContinue)
        }
        guard var pending = pendingBody, bufferedByteCount >= pending.length else { return nil }
        pending.request.body = Array(buffer[start..<start + pending.length])
        start += pending.length
        pendingBody = nil
        return pending.request
    }

    /// Scans the bytes not seen yet; returns the request (without its body) once its
    /// head is complete, and consumes the head.
    private mutating func scanHead() throws(HTTPParseError) -> HTTPRequest? {
        while start + head.scanned < buffer.count {
            let index = start + head.scanned
            head.scanned += 1
            guard buffer[index] == HTTPSyntax.lf else {
                if head.requestLine == nil, head.scanned - head.lineStart > limits.maxRequestLineBytes + 1 {
                    throw HTTPParseError(.uriTooLong, "the request line is longer than \(limits.maxRequestLineBytes) bytes")
                }
                if head.scanned > limits.maxHeaderBytes { throw headTooLarge() }
                continue
            }
            var line = buffer[(start + head.lineStart)..<index]
            if line.last == HTTPSyntax.cr { line = line.dropLast() }
            head.lineStart = head.scanned
            if head.scanned > limits.maxHeaderBytes { throw headTooLarge() }
            if line.contains(HTTPSyntax.cr) { throw .badRequest("a bare CR (not followed by LF) in the request head") }
            if let requestLine = head.requestLine {
                if line.isEmpty {
                    let request = try finishHead(requestLine, headers: head.headers)
                    start += head.scanned
                    head = HeadProgress()
                    return request
                }
                try addField(line)
            } else if !line.isEmpty {
                guard line.count <= limits.maxRequestLineBytes else {
                    throw HTTPParseError(.uriTooLong, "the request line is longer than \(limits.maxRequestLineBytes) bytes")
                }
                head.requestLine = try parseRequestLine(line)
            }
        }
        return nil
    }

    private func headTooLarge() -> HTTPParseError {
        HTTPParseError(.requestHeaderFieldsTooLarge, "the request head is larger than \(limits.maxHeaderBytes) bytes")
    }

    private func parseRequestLine(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> RequestLine {
        let parts = line.split(separator: HTTPSyntax.space, maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty }) else {
            throw .badRequest("malformed request line: expected 'METHOD /target HTTP/1.1' with single spaces")
        }
        guard let method = HTTPMethod(rawValue: String(decoding: parts[0], as: UTF8.self)) else {
            throw .badRequest("the method is not a token (letters, digits and !#$%&'*+-.^_`|~)")
        }
        let version = try parseVersion(parts[2])
        if method == .connect { throw HTTPParseError(.notImplemented, "CONNECT is not supported: this is not a proxy") }
        let target = String(decoding: parts[1], as: UTF8.self)
        let (path, queryItems) = try HTTPRequest.decode(target: target, method: method)
        return RequestLine(method: method, target: target, path: path, queryItems: queryItems, version: version)
    }

    /// `HTTP/1.0` or `HTTP/1.1` (a higher 1.x is read as 1.1, RFC 9110 §6.2).
    private func parseVersion(_ bytes: ArraySlice<UInt8>) throws(HTTPParseError) -> HTTPVersion {
        let digits = UInt8(ascii: "0")...UInt8(ascii: "9")
        guard bytes.count == 8, bytes.starts(with: "HTTP/".utf8), digits.contains(bytes[bytes.startIndex + 5]),
              bytes[bytes.startIndex + 6] == UInt8(ascii: "."), digits.contains(bytes[bytes.startIndex + 7])
        else {
            throw .badRequest("malformed HTTP version: expected HTTP/1.1 or HTTP/1.0 at the end of the request line")
        }
        let major = bytes[bytes.startIndex + 5] - UInt8(ascii: "0")
        let minor = bytes[bytes.startIndex + 7] - UInt8(ascii: "0")
        guard major == 1 else {
            throw HTTPParseError(.httpVersionNotSupported, "HTTP/\(major).\(minor) is not supported: use HTTP/1.1 or HTTP/1.0")
        }
        return minor == 0 ? .http1_0 : .http1_1
    }

    private mutating func addField(_ line: ArraySlice<UInt8>) throws(HTTPParseError) {
        if let first = line.first, HTTPSyntax.isWhitespace(first) {
            throw .badRequest("a header line starts with whitespace (obs-fold continuation lines are not accepted)")
        }
        guard let colon = line.firstIndex(of: HTTPSyntax.colon) else {
            throw .badRequest("a header line has no colon: expected 'Name: value'")
        }
        let name = line[..<colon]
        guard let last = name.last else { throw .badRequest("a header line has an empty name") }
        if HTTPSyntax.isWhitespace(last) { throw .badRequest("whitespace between a header name and its colon") }
        guard name.allSatisfy(HTTPSyntax.isTokenByte) else {
            throw .badRequest("a header name has a character that is not allowed in a token")
        }
        let nameText = String(decoding: name, as: UTF8.self)
        let value = HTTPSyntax.trimmed(line[(colon + 1)...])
        guard value.allSatisfy(HTTPSyntax.isFieldValueByte) else {
            throw .badRequest("the value of '\(nameText)' holds a control character (such as NUL)")
        }
        guard head.headers.count < limits.maxHeaderCount else {
            throw HTTPParseError(.requestHeaderFieldsTooLarge, "more than \(limits.maxHeaderCount) header fields")
        }
        head.headers.add(name: nameText, value: String(decoding: value, as: UTF8.self))
    }

    /// The request the head describes, once the rules that need every field are checked.
    private func finishHead(_ line: RequestLine, headers: HTTPHeaders) throws(HTTPParseError) -> HTTPRequest {
        let hosts = headers.values("Host")
        if hosts.count > 1 { throw .badRequest("more than one Host header") }
        if line.version == .http1_1, hosts.isEmpty { throw .badRequest("an HTTP/1.1 request without a Host header") }
        if let host = hosts.first, !host.utf8.allSatisfy({ HTTPSyntax.isTargetByte($0) && !"/?#@\\".utf8.contains($0) }) {
            throw .badRequest("the Host header is not a host name or address with an optional port")
        }
        if headers.contains("Transfer-Encoding") {
            if line.version == .http1_0 { throw .badRequest("Transfer-Encoding in an HTTP/1.0 request") }
            throw HTTPParseError(.notImplemented, "request bodies with a Transfer-Encoding (chunked) are not accepted; send Content-Length")
        }
        return HTTPRequest(method: line.method, target: line.target, path: line.path, queryItems: line.queryItems,
                           version: line.version, headers: headers, body: [], remoteAddress: nil)
    }

    /// The body length `Content-Length` gives (0 without one), within the limit.
    private func bodyLength(of request: HTTPRequest) throws(HTTPParseError) -> Int {
        let values = request.headers.values("Content-Length")
        guard let value = values.first else { return 0 }
        guard values.count == 1 else { throw .badRequest("more than one Content-Length header") }
        guard !value.isEmpty, value.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            throw .badRequest("Content-Length must be one decimal number, not '\(value.prefix(40))'")
        }
        guard value.utf8.count <= 18, let length = Int(value), length <= limits.maxBodyBytes else {
            throw HTTPParseError(.contentTooLarge,
                                 "the body of \(value.prefix(40)) bytes is larger than the limit of \(limits.maxBodyBytes) bytes")
        }
        return length
    }
}
