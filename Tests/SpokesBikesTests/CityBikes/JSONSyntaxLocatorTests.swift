import Testing
@testable import SpokesBikes

@Suite struct JSONSyntaxLocatorTests {
    let locator = JSONSyntaxLocator()

    func error(_ text: String) -> JSONSyntaxLocator.SyntaxError? {
        locator.firstError(in: Array(text.utf8))
    }

    @Test(arguments: [
        "{}", "[]", "0", "-1.5e+10", "\"a\\u00e9\\n\"", "true", " null ", "{\"a\": [1, {\"b\": false}]}",
    ])
    func acceptsValidJSON(_ text: String) {
        #expect(error(text) == nil)
    }

    @Test func pointsAtTheFirstBadCharacter() {
        #expect(error("{\"a\": 1,\n \"b\": [1, x]}") == .init(line: 2, column: 11, reason: "unexpected 'x', expected a value"))
    }

    @Test func trailingCommaIsAnError() {
        #expect(error("[1, 2,]")?.column == 7)
        #expect(error("{\"a\": 1,}")?.reason == "unexpected '}', expected a quoted key")
    }

    @Test func truncatedTextSaysEndOfFile() {
        #expect(error("[1")?.reason == "unexpected end of file inside an array")
        #expect(error("{\"a\": \"b")?.reason == "unexpected end of file inside a string")
        #expect(error("")?.reason == "unexpected end of file, expected a value")
    }

    @Test func rejectsBadNumbersEscapesAndLiterals() {
        #expect(error("01") != nil)
        #expect(error("1.") != nil)
        #expect(error("\"\\q\"")?.reason == "invalid escape \\q")
        #expect(error("tru") != nil)
        #expect(error("\"a\nb\"") != nil)
    }

    @Test func garbageAfterTheValueIsAnError() {
        #expect(error("{} {}")?.reason == "unexpected '{' after the end of the JSON value")
    }

    @Test func deepNestingIsRefusedWithoutRecursingForever() {
        let deep = String(repeating: "[", count: 100_000)
        #expect(error(deep)?.reason == "nesting deeper than 512 levels")
    }
}
