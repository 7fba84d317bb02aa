import Testing
@testable import SpokesDashboard

@Suite struct HTMLTests {
    @Test func escapesEveryCharacterThatCouldOpenMarkupOrCloseAnAttribute() {
        #expect(HTML.escape("<script>alert(1)</script> &\"'") == "&lt;script&gt;alert(1)&lt;/script&gt; &amp;&quot;&#39;")
    }

    @Test func leavesOtherTextAlone() {
        #expect(HTML.escape("Duomo · Cadorna 1 — Milano ✓") == "Duomo · Cadorna 1 — Milano ✓")
        #expect(HTML.escape("") == "")
    }

    @Test func writesNumbersWithAtMostTwoDecimalsAndNoTrailingZeros() {
        #expect(HTML.number(12) == "12")
        #expect(HTML.number(12.5) == "12.5")
        #expect(HTML.number(3.14159) == "3.14")
        #expect(HTML.number(0.05) == "0.05")
        #expect(HTML.number(-7.25) == "-7.25")
        #expect(HTML.number(-0.001) == "0")
    }

    @Test func neverWritesNaNOrInfinity() {
        #expect(HTML.number(.nan) == "0")
        #expect(HTML.number(.infinity) == "0")
        #expect(HTML.number(-.infinity) == "0")
        #expect(HTML.number(1e300) == "1000000000000")
    }
}
