import Testing
@testable import SpokesBikes

@Suite struct SweepListTests {
    @Test func readsSingleValuesRangesAndMixesInTheOrderWritten() throws {
        #expect(try SweepList.integers("7", for: .users) == [7])
        #expect(try SweepList.integers("100,200,400", for: .users) == [100, 200, 400])
        #expect(try SweepList.integers("1-4", for: .seed) == [1, 2, 3, 4])
        #expect(try SweepList.integers("1-4,8,16-18", for: .seed) == [1, 2, 3, 4, 8, 16, 17, 18])
        #expect(try SweepList.integers("9,3-4,1", for: .seed) == [9, 3, 4, 1])
        #expect(try SweepList.integers(" 5 - 6 , 2 ", for: .paths) == [5, 6, 2])
        #expect(try SweepList.integers("0-0", for: .seed) == [0])
        #expect(try SweepList.integers("+3", for: .users) == [3])
    }

    @Test func readsDecimalNumbersAndStationIDs() throws {
        #expect(try SweepList.numbers("0.1,0.25,2", for: .moveTime) == [0.1, 0.25, 2])
        #expect(try SweepList.numbers("0,1e-3,1000", for: .timeScale) == [0, 0.001, 1000])
        #expect(try SweepList.stationIDs("station-1,b5262607c8a44db673b2f9acd3ddeede") == ["station-1", "b5262607c8a44db673b2f9acd3ddeede"])
    }

    @Test func refusesEmptyListsAndItemsNamingTheFlag() {
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepList.integers("", for: .users) } == "--users: no values given")
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepList.integers("  ", for: .paths) } == "--paths: no values given")
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepList.integers("1,,2", for: .seed) }
            == "--seeds: empty item in '1,,2' (write values separated by commas: 1,2,5-8)")
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepList.numbers("0.1,", for: .moveTime) }?.hasPrefix("--move-time: empty item in '0.1,'") == true)
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepList.stationIDs(",a") }?.hasPrefix("--goal: empty item") == true)
    }

    @Test func refusesBadWholeNumbersAndRanges() {
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepList.integers("7-3", for: .seed) } == "--seeds: '7-3' is a descending range")
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepList.integers("ten", for: .users) } == "--users: 'ten' is not a whole number")
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepList.integers("1.5", for: .users) } == "--users: '1.5' is not a whole number")
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepList.integers("1-", for: .seed) } == "--seeds: '1-' is not a whole number")
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepList.integers("1-2-3", for: .seed) } == "--seeds: '1-2-3' is not a whole number")
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepList.integers("0", for: .users) } == "--users: '0' is out of range; expected 1 to 1000000")
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepList.integers("-3", for: .seed) } == "--seeds: '-3' is out of range; expected at least 0")
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepList.integers("1-2000000", for: .paths) }
            == "--paths: '1-2000000' is out of range; expected 1 to 1000000")
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepList.integers("99999999999999999999", for: .seed) }
            == "--seeds: '99999999999999999999' is out of range; expected at least 0")
    }

    @Test func refusesValuesListedTwice() {
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepList.integers("1-4,3", for: .seed) } == "--seeds: 3 is listed more than once")
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepList.integers("5,1-9", for: .users) } == "--users: 5 is listed more than once")
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepList.numbers("0.1,0.10", for: .moveTime) } == "--move-time: 0.10 is listed more than once")
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepList.stationIDs("a,b,a") } == "--goal: 'a' is listed more than once")
    }

    @Test func refusesBadDecimalNumbers() {
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepList.numbers("0.1-0.5", for: .moveTime) }
            == "--move-time: '0.1-0.5' is a range, and ranges are for whole numbers only (list the values: 0.1,0.2)")
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepList.numbers("fast", for: .timeScale) } == "--time-scale: 'fast' is not a number")
        for refused in ["inf", "nan", "0x1p3", "1e999", ".", "e"] {
            #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepList.numbers(refused, for: .timeScale) } == "--time-scale: '\(refused)' is not a number")
        }
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepList.numbers("-0.5", for: .moveTime) }
            == "--move-time: '-0.5' is out of range; expected a number from 0 to 86400")
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepList.numbers("1001", for: .timeScale) }
            == "--time-scale: '1001' is out of range; expected a number from 0 to 1000")
    }

    @Test func refusesAListLongerThanASweepBeforeExpandingIt() {
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepList.integers("0-9223372036854775807", for: .seed) }
            == "the sweep has too many runs; at most 100000 are allowed")
        let huge = sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepList.integers("0-9223372036854775806", for: .seed) }
        #expect(huge == "the sweep has 9223372036854775807 runs; at most 100000 are allowed")
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepList.integers("1-100000", for: .seed) } == nil)
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepList.integers("1-100000,100001", for: .seed) }
            == "the sweep has 100001 runs; at most 100000 are allowed")
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepList.integers("1-5", for: .seed, maximumCount: 4) }
            == "the sweep has 5 runs; at most 4 are allowed")
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepList.numbers("1,2,3", for: .moveTime, maximumCount: 2) }
            == "the sweep has 3 runs; at most 2 are allowed")
    }
}
