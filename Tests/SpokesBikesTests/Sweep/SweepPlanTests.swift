import Testing
@testable import SpokesBikes

@Suite struct SweepPlanTests {
    static let network = SweepNetwork.synthetic(stations: 4, bikes: 3, emptySlots: 3)

    @Test func everyCombinationIsOneRunWithTheSeedInnermost() throws {
        let plan = try SweepPlan(
            network: Self.network,
            lists: [.users: "20,10", .paths: "3", .moveTime: "0.1,0.2", .timeScale: "0", .seed: "5-7"])
        #expect(plan.runCount == 2 * 1 * 1 * 2 * 1 * 3)
        let runs = plan.runs
        #expect(runs.count == 12)
        #expect(Set(runs).count == 12, "every run differs")
        let tuples = runs.map { "\($0.setting.users)/\($0.setting.moveTime)/\($0.seed)" }
        #expect(tuples == [
            "20/0.1/5", "20/0.1/6", "20/0.1/7", "20/0.2/5", "20/0.2/6", "20/0.2/7",
            "10/0.1/5", "10/0.1/6", "10/0.1/7", "10/0.2/5", "10/0.2/6", "10/0.2/7",
        ])
        #expect(runs.allSatisfy { $0.setting.paths == 3 && $0.setting.timeScale == 0 && $0.setting.goal == nil })
        #expect(plan.varied == [.users, .moveTime])
    }

    @Test func theOrderFollowsTheParameterListOrderOutermostFirst() throws {
        let plan = try SweepPlan(
            network: Self.network, users: [1, 2], paths: [3, 4], goals: [nil, "station-2"], moveTimes: [0.1, 0.3],
            timeScales: [0, 0.5], seeds: [8, 9])
        #expect(plan.runCount == 64)
        var expected: [SweepRun] = []
        for users in [1, 2] {
            for paths in [3, 4] {
                for goal in [nil, "station-2"] {
                    for moveTime in [0.1, 0.3] {
                        for timeScale in [0, 0.5] {
                            for seed: UInt64 in [8, 9] {
                                expected.append(SweepRun(
                                    setting: SweepSetting(users: users, paths: paths, goal: goal, moveTime: moveTime, timeScale: timeScale),
                                    seed: seed))
                            }
                        }
                    }
                }
            }
        }
        #expect(plan.runs == expected)
        #expect(plan.run(at: 37) == expected[37])
        #expect(plan.varied == SweepParameter.grouping)
    }

    @Test func parametersNotGivenTakeTheirDefaultsButSeedsMustBeGiven() throws {
        let plan = try SweepPlan(network: .bundled(name: .milano), lists: [.seed: "1-3"])
        #expect(plan.users == [200] && plan.paths == [10] && plan.goals == [nil])
        #expect(plan.moveTimes == [0.1] && plan.timeScales == [0], "sweep runs are CPU work: flat out unless asked")
        #expect(plan.seeds == [1, 2, 3] && plan.runCount == 3 && plan.varied.isEmpty)
        #expect(plan.network.stations.count == 318)
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepPlan(network: Self.network, lists: [.users: "5"]) }
            == "--seeds is required (for example --seeds 1-32)")
    }

    @Test func eachRunRunsOneUserAtATimeWithItsParameters() throws {
        let plan = try SweepPlan(
            network: Self.network, lists: [.users: "30", .paths: "4", .goal: "station-3", .moveTime: "0.5", .timeScale: "0", .seed: "11"],
            maxMoves: 500)
        let options = plan.run(at: 0).options
        #expect(options == SimulationOptions(
            users: 30, paths: 4, goal: "station-3", seed: 11, timing: MoveTiming(moveTime: 0.5, timeScale: 0), workers: 1,
            maxMovesPerUser: 500))
        #expect(plan.taskInput(forRun: 0) == SweepRunTask.Input(network: Self.network, run: plan.run(at: 0), includeResults: false))
    }

    @Test func refusesMoreRunsThanTheMaximum() throws {
        #expect(try SweepPlan(network: Self.network, lists: [.users: "1-10", .seed: "1-10000"]).runCount == SweepPlan.maximumRuns)
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepPlan(network: Self.network, lists: [.users: "1-11", .seed: "1-10000"]) }
            == "the sweep has 110000 runs; at most 100000 are allowed")
        let many = Array(0..<UInt64(100_000))
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in
            try SweepPlan(network: Self.network, users: Array(1...100_000), paths: Array(1...100_000), seeds: many)
        } == "the sweep has 1000000000000000 runs; at most 100000 are allowed")
    }

    @Test func refusesWhatASimulationWouldRefuse() {
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepPlan(network: Self.network, lists: [.goal: "station-2,nowhere", .seed: "1"]) }
            == "goal station 'nowhere' is not in network 'synthetic' (give a station id from the network file)")
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in
            try SweepPlan(network: .synthetic(stations: 3, bikes: 0, emptySlots: 5), lists: [.seed: "1"])
        } == "network 'synthetic' has no free bikes at any station: no user could ever ride")
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepPlan(network: Self.network, lists: [.seed: "1"], maxMoves: 0) }
            == "max moves per user is 0; expected at least 1")
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepPlan(network: Self.network, users: [5], paths: [0], seeds: [1]) }
            == "--paths: '0' is out of range; expected 1 to 1000000")
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepPlan(network: Self.network, users: [5], paths: [1], moveTimes: [-1], seeds: [1]) }
            == "move time is -1.0; expected a number from 0 to 86400 seconds")
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepPlan(network: Self.network, users: [5], paths: [1], seeds: [.max]) }
            == "--seeds: '18446744073709551615' is out of range; expected at most 9223372036854775807")
    }

    @Test func refusesEmptyAndRepeatedValuesGivenDirectly() {
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepPlan(network: Self.network, users: [], paths: [1], seeds: [1]) }
            == "--users: no values given")
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepPlan(network: Self.network, users: [1], paths: [1], goals: [nil, nil], seeds: [1]) }
            == "--goal: no goal is listed more than once")
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepPlan(network: Self.network, users: [1], paths: [1], seeds: [4, 4]) }
            == "--seeds: 4 is listed more than once")
    }

    @Test func listErrorsComeThroughWithTheirFlag() {
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepPlan(network: Self.network, lists: [.seed: "7-3"]) }
            == "--seeds: '7-3' is a descending range")
        #expect(sweepPlanErrorMessage { () throws(SweepPlanError) in try SweepPlan(network: Self.network, lists: [.timeScale: "0,x", .seed: "1"]) }
            == "--time-scale: 'x' is not a number")
    }
}
