import Testing
@testable import SpokesHTTP
@testable import SpokesTransport

@Suite struct HTTPHeadersTests {
    @Test func looksNamesUpIgnoringCaseAndKeepsOrder() {
        var headers: HTTPHeaders = ["Accept": "text/html", "Set-Cookie": "a=1"]
        headers.add(name: "set-cookie", value: "b=2")
        #expect(headers.first("ACCEPT") == "text/html")
        #expect(headers.values("Set-Cookie") == ["a=1", "b=2"])
        #expect(headers.map(\.name) == ["Accept", "Set-Cookie", "set-cookie"])
        #expect(headers.first("Missing") == nil)
    }

    @Test func replaceOrAddLeavesOneFieldWhereTheFirstWas() {
        var headers: HTTPHeaders = ["A": "1", "B": "2", "a": "3"]
        headers.replaceOrAdd(name: "a", value: "9")
        #expect(headers.map(\.name) == ["A", "B"])
        #expect(headers.first("a") == "9")
        headers.replaceOrAdd(name: "C", value: "3")
        #expect(headers.map(\.name) == ["A", "B", "C"])
    }

    @Test func findsTokensInCommaSeparatedValues() {
        let headers: HTTPHeaders = ["Connection": "Keep-Alive , Upgrade", "connection": "TE"]
        #expect(headers.containsToken("upgrade", in: "CONNECTION"))
        #expect(headers.containsToken("te", in: "Connection"))
        #expect(!headers.containsToken("close", in: "Connection"))
    }

    @Test func removesEveryFieldWithAName() {
        var headers: HTTPHeaders = ["A": "1", "a": "2", "B": "3"]
        headers.remove("A")
        #expect(headers == ["B": "3"])
    }
}
