import Testing
@testable import SpokesConcurrency

@Suite struct DurationClampedTests {
    @Test func secondsWithinRangeAreKept() {
        #expect(Duration.clamped(seconds: 1.5) == .milliseconds(1500))
        #expect(Duration.clamped(seconds: 1e-9) == .nanoseconds(1))
        #expect(Duration.clamped(seconds: 999_999_999) == .seconds(999_999_999))
    }

    @Test func nanNegativeAndHugeSecondsSaturate() {
        for seconds: Double in [.nan, -.nan, -1, -1e300, -.infinity, 0, -0.0] {
            #expect(Duration.clamped(seconds: seconds) == .zero, "\(seconds)")
        }
        for seconds: Double in [1e9, 1e21, 1e300, .greatestFiniteMagnitude, .infinity] {
            #expect(Duration.clamped(seconds: seconds) == Duration.maximumClamped, "\(seconds)")
        }
    }

    @Test func pollMillisecondsRoundUpAndSaturate() {
        #expect(Duration.zero.pollMilliseconds == 0)
        #expect(Duration.nanoseconds(1).pollMilliseconds == 1)
        #expect(Duration.milliseconds(1500).pollMilliseconds == 1500)
        #expect(Duration.clamped(seconds: 0.0015).pollMilliseconds == 2)
        #expect(Duration.maximumClamped.pollMilliseconds == Int32.max)
        #expect(Duration.seconds(2_147_483).pollMilliseconds == Int32.max)
        #expect(Duration.seconds(-5).pollMilliseconds == 0)
    }

    @Test func integersFromDoublesSaturate() {
        #expect(Int(saturating: 2.9) == 2)
        #expect(Int(saturating: -2.9) == -2)
        #expect(Int(saturating: .nan) == 0)
        #expect(Int(saturating: 1e300) == .max)
        #expect(Int(saturating: .infinity) == .max)
        #expect(Int(saturating: -.infinity) == .min)
        #expect(Int(saturating: 9_223_372_036_854_775_807.0) == .max, "2^63 itself is out of range")
        #expect(Int32(saturating: 3e9) == .max)
        #expect(UInt64(saturating: -1) == 0)
        #expect(UInt64(saturating: 1.8446744073709552e19) == .max)
    }
}
