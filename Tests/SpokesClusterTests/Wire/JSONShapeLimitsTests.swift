import Testing
@testable import SpokesCluster

@Suite struct JSONShapeLimitsTests {
    let limits = JSONShapeLimits(maximumDepth: 3, maximumArrayLength: 4)

    func check(_ text: String) -> JSONShapeLimits.Violation? {
        do {
            try limits.check(Array(text.utf8))
            return nil
        } catch {
            return error
        }
    }

    @Test func acceptsDocumentsWithinTheLimits() {
        #expect(check(#"{"a": [1, 2, 3, 4], "b": {"c": []}}"#) == nil)
        #expect(check("[[[ ]]]") == nil)
        #expect(check("[]") == nil)
        #expect(check("17") == nil)
    }

    @Test func refusesNestingDeeperThanTheLimit() {
        #expect(check("[[[[]]]]") == .tooDeep(limit: 3))
        #expect(check(#"{"a": {"b": {"c": {}}}}"#) == .tooDeep(limit: 3))
    }

    @Test func refusesAnArrayLongerThanTheLimitAtAnyLevel() {
        #expect(check("[1, 2, 3, 4, 5]") == .arrayTooLong(limit: 4))
        #expect(check(#"{"a": [[1], ["x", "y", "z", "w", "v"]]}"#) == .arrayTooLong(limit: 4))
        #expect(check("[[1, 2, 3, 4], [1, 2, 3, 4], [1, 2, 3, 4], [1, 2, 3, 4]]") == nil)
    }

    @Test func ignoresBracketsAndCommasInsideStrings() {
        #expect(check(#"["[[[[[", ",,,,,,", "\"]]]]", "{"]"#) == nil)
        #expect(check(#"{"k": "\\"}"#) == nil)
    }

    @Test func passesMalformedJSONToTheDecoder() {
        #expect(check("]]]}}}") == nil)
        #expect(check(#""unterminated"#) == nil)
    }

    @Test func namesTheRejectionCounter() {
        #expect(JSONShapeLimits.Violation.tooDeep(limit: 1).rejection == .jsonTooDeep)
        #expect(JSONShapeLimits.Violation.arrayTooLong(limit: 1).rejection == .arrayTooLong)
    }
}
