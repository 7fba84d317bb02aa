import Testing
@testable import SpokesCluster

/// One JSON text, fragments too, as `JSONSerialization` with `.fragmentsAllowed` took them.
struct JSONTextTests {
    @Test func jsonTextsAndFragmentsAreValid() {
        for text in [#"{"samples": 1000, "seed": 1}"#, #"[1, "a", null, true, {"x": [false]}]"#, "3", "-2.5e3", #""text""#, "null", "true", " {} "] {
            #expect(JSONText.isValid(Array(text.utf8)), "\(text)")
        }
    }

    @Test func anythingElseIsNot() {
        for text in ["", "{", #"{"a": }"#, "[1, 2", "nul", "{samples: 1}", #"{"a": 1} x"#, "'a'", #"["a" "b"]"#] {
            #expect(!JSONText.isValid(Array(text.utf8)), "\(text)")
        }
    }
}
