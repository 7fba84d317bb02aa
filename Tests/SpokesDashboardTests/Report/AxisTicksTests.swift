import Testing
@testable import SpokesDashboard

@Suite struct AxisTicksTests {
    @Test func ticksAreNiceAndReachTheMaximum() {
        #expect(AxisTicks.upTo(7) == [0, 2, 4, 6, 8])
        #expect(AxisTicks.upTo(100) == [0, 20, 40, 60, 80, 100])
        #expect(AxisTicks.upTo(0.3, count: 3) == [0, 0.1, 0.2, 0.30000000000000004])
    }

    @Test func countsNeverGetFractionalTicks() {
        #expect(AxisTicks.upTo(3, count: 5, integers: true) == [0, 1, 2, 3])
        #expect(AxisTicks.upTo(1, count: 4, integers: true) == [0, 1])
    }

    @Test func anEmptyOrBrokenRangeStillHasAnAxis() {
        #expect(AxisTicks.upTo(0) == [0, 1])
        #expect(AxisTicks.upTo(-4) == [0, 1])
        #expect(AxisTicks.upTo(.nan) == [0, 1])
        #expect(AxisTicks.upTo(.infinity) == [0, 1])
    }

    @Test func stepsAreOneTwoOrFiveTimesAPowerOfTen() {
        #expect(AxisTicks.niceStep(0.07) == 0.1)
        #expect(AxisTicks.niceStep(1.5) == 2)
        #expect(AxisTicks.niceStep(3) == 5)
        #expect(AxisTicks.niceStep(5) == 5)
        #expect(AxisTicks.niceStep(0) == 1)
    }

    @Test func labelsHaveNoFloatNoise() {
        #expect(AxisTicks.label(0.30000000000000004) == "0.3")
        #expect(AxisTicks.label(1500) == "1500")
        #expect(AxisTicks.label(2.5) == "2.5")
        #expect(AxisTicks.label(0) == "0")
        #expect(AxisTicks.label(-0.0001) == "0")
        #expect(AxisTicks.label(.nan) == "0")
    }

    @Test func anyFiniteMaximumGivesAFewTicksWithoutTrapping() {
        for maximum in [4 * .leastNonzeroMagnitude, .leastNonzeroMagnitude, 1e-300, .greatestFiniteMagnitude] {
            let ticks = AxisTicks.upTo(maximum)
            #expect(ticks.first == 0 && ticks.count >= 2 && ticks.count <= 51, "\(maximum): \(ticks.count) ticks")
        }
    }
}
