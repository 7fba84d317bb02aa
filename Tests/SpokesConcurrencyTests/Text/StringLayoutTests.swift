import Testing
@testable import SpokesConcurrency

/// Trimming and padding as Foundation's `trimmingCharacters(in:)` and `padding(toLength:)` did.
struct StringLayoutTests {
    @Test func trimmingDropsWhitespaceAndNewlinesAtBothEndsOnly() {
        #expect(" \t secret value\r\n".trimmingWhitespace() == "secret value")
        #expect("a".trimmingWhitespace() == "a")
        #expect(" \n\t ".trimmingWhitespace() == "")
        #expect("".trimmingWhitespace() == "")
        #expect("x ,y"[...].trimmingWhitespace() == "x ,y")
    }

    @Test func paddedFillsWithSpacesOrCuts() {
        #expect("INFO".padded(to: 7) == "INFO   ")
        #expect("WARNING!".padded(to: 7) == "WARNING")
        #expect("abc".padded(to: 3) == "abc")
        #expect("abc".padded(to: 0) == "")
        #expect("abc".padded(to: -1) == "")
    }
}
