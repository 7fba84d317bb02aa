import Testing
@testable import SpokesConcurrency

/// `printf`-style text as Foundation's `String(format:)` gave it for the conversions in use.
struct StringPrintfTests {
    @Test func formatsNumbersAsTheCLibraryDoes() {
        #expect(String(printf: "%.1f MiB (the coordinator %.1f MiB)", 20.66, 21.04) == "20.7 MiB (the coordinator 21.0 MiB)")
        #expect(String(printf: "%d tasks at %.0f tasks/s", 2_000, 1234.5) == "2000 tasks at 1234 tasks/s")
        #expect(String(printf: "%9.3f|%02d|%g|%.0f%%", 3.14159, 7, 0.25, 99.6) == "    3.142|07|0.25|100%")
        #expect(String(printf: "%%%02X", UInt8(0x2f)) == "%2F")
        #expect(String(printf: "no conversions") == "no conversions")
    }

    @Test func textLongerThanTheFirstBufferIsWhole() {
        let long = String(repeating: "x", count: 300)
        #expect(String(printf: "\(long) %d", 42) == long + " 42")
    }
}
