import SpokesTestKit
import Testing
@testable import SpokesHTTP
@testable import SpokesTransport

@Suite struct HTTPRequestParserTests {
    /// Every request `bytes` holds, fed in one piece; rethrows the parser's error.
    func parse(_ bytes: [UInt8], limits: HTTPLimits = HTTPLimits()) throws(HTTPParseError) -> [HTTPRequest] {
        var parser = HTTPRequestParser(limits: limits)
        parser.feed(bytes)
        var requests: [HTTPRequest] = []
        while let request = try parser.nextRequest() { requests.append(request) }
        return requests
    }

    func parse(_ text: String, limits: HTTPLimits = HTTPLimits()) throws(HTTPParseError) -> [HTTPRequest] {
        try parse(Array(text.utf8), limits: limits)
    }

    /// The error parsing `bytes` ends in, if any.
    func error(_ bytes: [UInt8], limits: HTTPLimits = HTTPLimits()) -> HTTPParseError? {
        do {
            _ = try parse(bytes, limits: limits)
            return nil
        } catch {
            return error
        }
    }

    /// A request and its outcome in a form two runs can be compared by.
    static func summary(_ request: HTTPRequest) -> String {
        let headers = request.headers.map { "\($0.name)=\($0.value)" }.joined(separator: "|")
        return "\(request.method) \(request.target) \(request.version) [\(headers)] \(request.body)"
    }

    static func outcome(of chunks: [ArraySlice<UInt8>]) -> [String] {
        var parser = HTTPRequestParser()
        var results: [String] = []
        for chunk in chunks {
            parser.feed(chunk)
            do {
                while let request = try parser.nextRequest() { results.append(summary(request)) }
            } catch {
                results.append("error \(error.status.code)")
                return results
            }
        }
        return results
    }

    // MARK: Requests that parse

    @Test func parsesARequestLineHeadersAndAnEmptyBody() throws {
        let requests = try parse("GET /status HTTP/1.1\r\nHost: node-a:8080\r\nAccept:  text/html \r\nX-Empty:\r\n\r\n")
        let request = try #require(requests.first)
        #expect(requests.count == 1)
        #expect(request.method == .get)
        #expect(request.target == "/status")
        #expect(request.path == "/status")
        #expect(request.version == .http1_1)
        #expect(request.headers.first("host") == "node-a:8080")
        #expect(request.headers.first("ACCEPT") == "text/html", "optional whitespace around a value is trimmed")
        #expect(request.headers.first("X-Empty") == "")
        #expect(request.body.isEmpty)
    }

    @Test func acceptsBareLFLineEndings() throws {
        let request = try #require(try parse("GET / HTTP/1.1\nHost: a\n\n").first)
        #expect(request.headers.first("Host") == "a")
    }

    @Test func skipsEmptyLinesBeforeTheRequestLine() throws {
        let requests = try parse("\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(requests.map(\.path) == ["/"])
    }

    @Test func readsAHigherHTTP1MinorVersionAsHTTP11() throws {
        #expect(try parse("GET / HTTP/1.7\r\nHost: a\r\n\r\n").first?.version == .http1_1)
    }

    @Test func acceptsObsTextInAFieldValue() throws {
        let request = try #require(try parse(Array("GET / HTTP/1.1\r\nHost: a\r\nX-Name: ".utf8) + [0xE9] + Array("\r\n\r\n".utf8)).first)
        #expect(request.headers.first("X-Name") != nil)
    }

    @Test func decodesThePathAndTheQuery() throws {
        let request = try #require(try parse("GET /a%20b/c+d?name=J%C3%BCrg+en&flag&empty=&x=1%2B1 HTTP/1.1\r\nHost: a\r\n\r\n").first)
        #expect(request.path == "/a b/c+d", "+ is a plus in the path")
        #expect(request.query("name") == "Jürg en", "+ is a space in the query")
        #expect(request.query("flag") == "")
        #expect(request.query("empty") == "")
        #expect(request.query("x") == "1+1")
        #expect(request.query("missing") == nil)
        #expect(request.queryItems.map(\.name) == ["name", "flag", "empty", "x"])
    }

    @Test func takesThePathOfAnAbsoluteFormTarget() throws {
        let request = try #require(try parse("GET HTTP://example.com:80/x/y?z=1 HTTP/1.1\r\nHost: example.com\r\n\r\n").first)
        #expect(request.path == "/x/y")
        #expect(request.query("z") == "1")
        #expect(try parse("GET http://example.com HTTP/1.1\r\nHost: example.com\r\n\r\n").first?.path == "/")
    }

    @Test func acceptsAsteriskOnlyForOptions() throws {
        #expect(try parse("OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n").first?.path == "*")
        #expect(error(Array("GET * HTTP/1.1\r\nHost: a\r\n\r\n".utf8))?.status == .badRequest)
    }

    @Test(arguments: [
        ("GET / HTTP/1.1\r\nHost: a\r\n\r\n", true),
        ("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", false),
        ("GET / HTTP/1.1\r\nHost: a\r\nConnection: Upgrade, CLOSE\r\n\r\n", false),
        ("GET / HTTP/1.0\r\n\r\n", false),
        ("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", true),
        ("GET / HTTP/1.0\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n", false),
    ])
    func keepAliveFollowsTheVersionAndTheConnectionHeader(head: String, keepAlive: Bool) throws {
        #expect(try parse(head).first?.keepAlive == keepAlive)
    }

    @Test func readsABodyByContentLength() throws {
        let requests = try parse("POST /jobs HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhelloGET /next HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(requests.map(\.path) == ["/jobs", "/next"])
        #expect(requests.first?.body == Array("hello".utf8))
        #expect(try parse("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhi").first?.body == Array("hi".utf8),
                "any method may carry a body with a Content-Length")
        #expect(try parse("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n").first?.body == [])
    }

    @Test func waitsForTheWholeBody() throws {
        var parser = HTTPRequestParser()
        parser.feed(Array("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\nab".utf8))
        #expect(try parser.nextRequest() == nil)
        #expect(parser.hasPartialRequest)
        parser.feed(Array("cd".utf8))
        #expect(try parser.nextRequest()?.body == Array("abcd".utf8))
        #expect(!parser.hasPartialRequest)
    }

    @Test func asksForContinueOnceWhenTheClientExpectsIt() throws {
        var parser = HTTPRequestParser()
        parser.feed(Array("POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n".utf8))
        #expect(try parser.nextRequest() == nil)
        let first = parser.shouldSendContinue()
        let second = parser.shouldSendContinue()
        #expect(first)
        #expect(!second, "only once per request")
        parser.feed(Array("abc".utf8))
        #expect(try parser.nextRequest()?.body == Array("abc".utf8))
    }

    @Test func returnsPipelinedRequestsInOrder() throws {
        let stream = (1...3).map { "GET /\($0) HTTP/1.1\r\nHost: a\r\n\r\n" }.joined()
        #expect(try parse(stream).map(\.path) == ["/1", "/2", "/3"])
    }

    @Test func parsesTheSameWhateverByteTheStreamIsSplitAt() throws {
        let stream = Array(("\r\nPOST /a?b=c HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nX-A: 1\r\n\r\nxyz"
            + "GET /two HTTP/1.0\nConnection: keep-alive\n\n"
            + "PUT /three HTTP/1.1\r\nHost: b\r\nContent-Length: 1\r\n\r\n!").utf8)
        let whole = Self.outcome(of: [stream[...]])
        #expect(whole.count == 3)
        for split in 0...stream.count {
            #expect(Self.outcome(of: [stream[..<split], stream[split...]]) == whole, "split at \(split)")
        }
        #expect(Self.outcome(of: stream.indices.map { stream[$0...$0] }) == whole, "one byte at a time")
    }

    @Test func readsCookies() throws {
        let request = try #require(try parse("GET / HTTP/1.1\r\nHost: a\r\nCookie: theme=dark;  session=\"a=b\"\r\nCookie: last=1\r\n\r\n").first)
        #expect(request.cookie("theme") == "dark")
        #expect(request.cookie("session") == "a=b")
        #expect(request.cookie("last") == "1")
        #expect(request.cookie("Theme") == nil)
    }

    // MARK: Requests that are refused

    /// A request the parser must refuse, with the status it must answer.
    struct Refused: Sendable, CustomTestStringConvertible {
        var name: String
        var bytes: [UInt8]
        var status: Int
        var testDescription: String { name }

        init(_ name: String, _ text: String, _ status: Int) {
            self.init(name, Array(text.utf8), status)
        }

        init(_ name: String, _ bytes: [UInt8], _ status: Int) {
            self.name = name
            self.bytes = bytes
            self.status = status
        }
    }

    static let refused: [Refused] = [
        Refused("request line without a version", "GET /\r\n\r\n", 400),
        Refused("request line with a double space", "GET  / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        Refused("request line with four parts", "GET / HTTP/1.1 x\r\nHost: a\r\n\r\n", 400),
        Refused("method that is not a token", "G(T / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        Refused("malformed version", "GET / HTTPS/1.1\r\nHost: a\r\n\r\n", 400),
        Refused("version without a minor digit", "GET / HTTP/1\r\nHost: a\r\n\r\n", 400),
        Refused("HTTP/2.0", "GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505),
        Refused("HTTP/0.9", "GET / HTTP/0.9\r\n\r\n", 505),
        Refused("target without a leading slash", "GET status HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        Refused("target with a non-ASCII byte", Array("GET /caf".utf8) + [0xC3, 0xA9] + Array(" HTTP/1.1\r\nHost: a\r\n\r\n".utf8), 400),
        Refused("broken percent-escape", "GET /a%zz HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        Refused("truncated percent-escape", "GET /a%2 HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        Refused("encoded NUL in the path", "GET /a%00b HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        Refused("path that is not UTF-8", "GET /%FF HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        Refused("query that is not UTF-8", "GET /?a=%C3 HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        Refused("CONNECT", "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com\r\n\r\n", 501),
        Refused("header line without a colon", "GET / HTTP/1.1\r\nHost a\r\n\r\n", 400),
        Refused("whitespace before the colon", "GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400),
        Refused("tab before the colon", "GET / HTTP/1.1\r\nHost\t: a\r\n\r\n", 400),
        Refused("empty header name", "GET / HTTP/1.1\r\nHost: a\r\n: b\r\n\r\n", 400),
        Refused("space inside a header name", "GET / HTTP/1.1\r\nHost: a\r\nX A: b\r\n\r\n", 400),
        Refused("obs-fold continuation line", "GET / HTTP/1.1\r\nHost: a\r\nX-A: b\r\n  c\r\n\r\n", 400),
        Refused("obs-fold with a tab", "GET / HTTP/1.1\r\nHost: a\r\nX-A: b\r\n\tc\r\n\r\n", 400),
        Refused("NUL in a header value", "GET / HTTP/1.1\r\nHost: a\r\nX-A: b\u{0}c\r\n\r\n", 400),
        Refused("control byte in a header value", "GET / HTTP/1.1\r\nHost: a\r\nX-A: b\u{1}c\r\n\r\n", 400),
        Refused("DEL in a header value", "GET / HTTP/1.1\r\nHost: a\r\nX-A: b\u{7F}c\r\n\r\n", 400),
        Refused("bare CR in a header value", "GET / HTTP/1.1\r\nHost: a\r\nX-A: b\rc\r\n\r\n", 400),
        Refused("bare CR in the request line", "GET /\r HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        Refused("bare CR as the empty line", "GET / HTTP/1.1\r\nHost: a\r\n\r\r\n", 400),
        Refused("HTTP/1.1 without Host", "GET / HTTP/1.1\r\nAccept: */*\r\n\r\n", 400),
        Refused("two Host headers", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
        Refused("Host with a path", "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", 400),
        Refused("Host with a space", "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400),
        Refused("two Content-Length headers, even equal", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx", 400),
        Refused("Content-Length list", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1, 1\r\n\r\nx", 400),
        Refused("negative Content-Length", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400),
        Refused("signed Content-Length", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +1\r\n\r\nx", 400),
        Refused("empty Content-Length", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n", 400),
        Refused("Content-Length over the limit", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 65537\r\n\r\n", 413),
        Refused("Content-Length that overflows", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999999\r\n\r\n", 413),
        Refused("chunked request body", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 501),
        Refused("Transfer-Encoding with Content-Length", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nabc", 501),
        Refused("Transfer-Encoding in HTTP/1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
    ]

    @Test(arguments: refused)
    func refusesWithTheStatusRFC9112Asks(_ case: Refused) {
        let failure = error(`case`.bytes)
        #expect(failure?.status.code == `case`.status, "\(`case`.name): \(failure.map(String.init(describing:)) ?? "accepted")")
        #expect(failure.map { !$0.reason.isEmpty } ?? false)
    }

    @Test func refusesALongRequestLineWith414BeforeItEnds() {
        var limits = HTTPLimits()
        limits.maxRequestLineBytes = 32
        var parser = HTTPRequestParser(limits: limits)
        parser.feed(Array("GET /\(String(repeating: "a", count: 40))".utf8))
        #expect(throws: HTTPParseError.self) { try parser.nextRequest() }
        #expect(error(Array("GET /\(String(repeating: "a", count: 40)) HTTP/1.1\r\nHost: a\r\n\r\n".utf8), limits: limits)?.status == .uriTooLong)
        let exactly = "GET /\(String(repeating: "a", count: 32 - 14)) HTTP/1.1"
        #expect(exactly.utf8.count == 32)
        #expect((try? parse(exactly + "\r\nHost: a\r\n\r\n", limits: limits))?.count == 1, "a request line at the limit is accepted")
    }

    @Test func refusesALargeHeadWith431BeforeItEnds() {
        var limits = HTTPLimits()
        limits.maxHeaderBytes = 64
        var parser = HTTPRequestParser(limits: limits)
        parser.feed(Array("GET / HTTP/1.1\r\nHost: a\r\nX-Long: \(String(repeating: "b", count: 60))".utf8))
        do {
            _ = try parser.nextRequest()
            Issue.record("a head over the limit was accepted")
        } catch {
            #expect(error.status == .requestHeaderFieldsTooLarge)
        }
        #expect(parser.bufferedByteCount < 100, "the parser holds no more than what was fed")
    }

    @Test func refusesTooManyHeadersWith431() {
        var limits = HTTPLimits()
        limits.maxHeaderCount = 3
        let fields = (1...4).map { "X-\($0): v\r\n" }.joined()
        #expect(error(Array("GET / HTTP/1.1\r\nHost: a\r\n\(fields)\r\n".utf8), limits: limits)?.status == .requestHeaderFieldsTooLarge)
        #expect((try? parse("GET / HTTP/1.1\r\nHost: a\r\nX-1: v\r\nX-2: v\r\n\r\n", limits: limits))?.count == 1)
    }

    @Test func keepsThrowingAfterAnError() throws {
        var parser = HTTPRequestParser()
        parser.feed(Array("GET / HTTP/1.1\r\nHost a\r\n\r\n".utf8))
        #expect(throws: HTTPParseError.self) { try parser.nextRequest() }
        parser.feed(Array("GET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8))
        #expect(throws: HTTPParseError.self) { try parser.nextRequest() }
    }

    // MARK: Fuzz

    /// Valid requests to mutate: the fuzz mostly produces near misses, which reach deeper
    /// into the parser than random bytes do.
    static let seeds: [String] = [
        "GET /status?node=a%20b HTTP/1.1\r\nHost: a\r\nCookie: s=1\r\n\r\n",
        "POST /jobs HTTP/1.1\r\nHost: a:1\r\nContent-Length: 4\r\n\r\nbody",
        "GET / HTTP/1.0\nConnection: keep-alive\n\nHEAD /x HTTP/1.1\r\nHost: b\r\n\r\n",
        "OPTIONS * HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n!",
    ]

    @Test func survivesSeededRandomAndMutatedInputsConsistently() {
        var generator = TestGenerator(seed: 0x5EED_0F_4770)
        let alphabet = Array("GET /?=&%+:; \r\n\t\u{0}HTTP/1.01Host: Content-Length Transfer-Encoding chunked 9".utf8) + [0xFF, 0x80]
        var outcomes: [String: Int] = [:]
        for round in 0..<3000 {
            var input: [UInt8]
            if round % 4 == 0 {
                input = (0..<Int.random(in: 0...200, using: &generator)).map { _ in
                    Bool.random(using: &generator) ? alphabet.randomElement(using: &generator)! : UInt8.random(in: 0...255, using: &generator)
                }
            } else {
                input = Array(Self.seeds.randomElement(using: &generator)!.utf8)
                for _ in 0..<Int.random(in: 1...4, using: &generator) where !input.isEmpty {
                    let index = Int.random(in: 0..<input.count, using: &generator)
                    switch Int.random(in: 0..<4, using: &generator) {
                    case 0: input[index] = alphabet.randomElement(using: &generator)!
                    case 1: input.insert(UInt8.random(in: 0...255, using: &generator), at: index)
                    case 2: input.remove(at: index)
                    default: input.insert(contentsOf: input[index...].prefix(8), at: index)
                    }
                }
            }
            let whole = Self.outcome(of: [input[...]])
            var chunks: [ArraySlice<UInt8>] = []
            var start = 0
            while start < input.count {
                let end = min(input.count, start + Int.random(in: 1...16, using: &generator))
                chunks.append(input[start..<end])
                start = end
            }
            #expect(Self.outcome(of: chunks) == whole, "round \(round): the outcome depends on how the bytes were split")
            let last = whole.last.map { $0.hasPrefix("error") ? $0 : "request" } ?? "needs more"
            outcomes[last, default: 0] += 1
        }
        #expect(outcomes.values.reduce(0, +) == 3000)
        #expect(outcomes.keys.contains("request") && outcomes.keys.contains("error 400"), "the fuzz reaches both outcomes: \(outcomes)")
    }
}
