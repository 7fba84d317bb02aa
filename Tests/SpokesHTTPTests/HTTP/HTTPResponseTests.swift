import Foundation
import Testing
@testable import SpokesHTTP
@testable import SpokesTransport

@Suite struct HTTPResponseTests {
    func request(_ method: HTTPMethod = .get, version: HTTPVersion = .http1_1) throws -> HTTPRequest {
        try HTTPRequest(method: method, target: "/", version: version, headers: ["Host": "a"])
    }

    func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func serialisesTheStatusLineHeadersContentLengthAndBody() throws {
        let bytes = HTTPResponse.text("hello").serialized(for: try request(), keepAlive: true)
        #expect(text(bytes) == "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 5\r\n\r\nhello")
    }

    @Test func saysConnectionCloseWhenClosing() throws {
        let bytes = HTTPResponse.html("<p>", status: .notFound).serialized(for: try request(), keepAlive: false)
        #expect(text(bytes).hasPrefix("HTTP/1.1 404 Not Found\r\n"))
        #expect(text(bytes).contains("\r\nConnection: close\r\n"))
        #expect(text(bytes).hasSuffix("\r\n\r\n<p>"))
    }

    @Test func tellsAnHTTP10ClientTheConnectionStaysOpen() throws {
        let bytes = HTTPResponse.text("x").serialized(for: try request(version: .http1_0), keepAlive: true)
        #expect(text(bytes).hasPrefix("HTTP/1.1 200 OK\r\n"), "a 1.1 server answers in 1.1")
        #expect(text(bytes).contains("\r\nConnection: keep-alive\r\n"))
    }

    @Test func answersHeadWithTheHeadOnly() throws {
        let bytes = HTTPResponse.text("hello").serialized(for: try request(.head), keepAlive: true)
        #expect(text(bytes).hasSuffix("Content-Length: 5\r\n\r\n"), "the length of the body a GET would get, and no body")
    }

    @Test func sendsNoBodyOrLengthWithNoContent() throws {
        let bytes = HTTPResponse(status: .noContent, body: .bytes(Array("ignored".utf8))).serialized(for: try request(), keepAlive: true)
        #expect(text(bytes) == "HTTP/1.1 204 No Content\r\n\r\n")
    }

    @Test func replacesFramingHeadersTheHandlerSet() throws {
        let response = HTTPResponse(headers: ["content-length": "999", "Transfer-Encoding": "chunked", "Connection": "keep-alive", "X-A": "1"],
                                    body: .bytes([1, 2]))
        let head = text(response.serialized(for: try request(), keepAlive: false))
        #expect(!head.contains("999"))
        #expect(!head.contains("chunked"))
        #expect(head.contains("X-A: 1\r\nContent-Length: 2\r\nConnection: close\r\n\r\n"))
    }

    @Test func leavesOutHeadersThatWouldSplitTheResponse() throws {
        let response = HTTPResponse(headers: ["X-Bad": "a\r\nSet-Cookie: stolen=1", "Bad Name": "v", "X-Good": "ok"])
        let head = text(response.serialized(for: try request(), keepAlive: true))
        #expect(!head.contains("stolen"))
        #expect(!head.contains("Bad Name"))
        #expect(head.contains("X-Good: ok\r\n"))
    }

    @Test func percentEncodesARedirectLocation() throws {
        let response = HTTPResponse.redirect(to: "/next page\r\nSet-Cookie: x=1")
        #expect(response.status == .seeOther)
        #expect(response.headers.first("Location") == "/next%20page%0D%0ASet-Cookie:%20x=1")
        #expect(HTTPResponse.redirect(to: "/a", status: .movedPermanently).status.code == 301)
    }

    @Test func encodesJSONAndAnswers500WhenItCannot() throws {
        let response = HTTPResponse.json(["nodes": 3])
        #expect(response.headers.first("Content-Type") == "application/json")
        guard case .bytes(let body) = response.body else { throw Failure.notBytes }
        #expect(text(body) == #"{"nodes":3}"#)
        #expect(HTTPResponse.json(Double.nan).status == .internalServerError)
        #expect(HTTPResponse.json(bytes: Array("[]".utf8)).headers.first("Content-Type") == "application/json")
    }

    @Test func sendsAnEventStreamHeadWithoutALength() throws {
        let response = HTTPResponse.eventStream(HTTPEventStream(), headers: ["Content-Type": "text/plain", "Content-Length": "5"])
        let head = text(response.serialized(for: try request(), keepAlive: true))
        #expect(head == "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n")
    }

    @Test func addsADateInIMFFixdateForm() throws {
        let date = Date(timeIntervalSince1970: 784_111_777)
        #expect(HTTPResponse.httpDate(date) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(text(HTTPResponse.text("").serialized(for: try request(), keepAlive: true, date: date)).contains("Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n"))
    }

    @Test func answersAnUnreadableRequestAsHTTP11WithAReasonPhraseWithoutLineBreaks() {
        let response = HTTPResponse(status: HTTPStatus(code: 400, reasonPhrase: "Bad\r\nX: y"))
        #expect(text(response.serialized(for: nil, keepAlive: false)).hasPrefix("HTTP/1.1 400 BadX: y\r\n"))
        #expect(HTTPStatus(code: 431).reasonPhrase == "Request Header Fields Too Large")
    }

    enum Failure: Error { case notBytes }
}
