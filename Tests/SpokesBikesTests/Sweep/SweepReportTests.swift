import Foundation
import Testing
@testable import SpokesBikes

@Suite struct SweepReportTests {
    static let network = Network.synthetic(stations: 3, bikes: 4, emptySlots: 4)

    /// Figures with the given counts; everything else fixed.
    static func figures(paths: Int, waiting: Double, takes: Int = 0, leaves: Int = 0, conserved: Bool = true) -> SweepRunFigures {
        let stations = network.stations
        var report = SimulationReport(
            network: network, finalStations: stations, options: SimulationOptions(users: 2, paths: 1), results: [],
            wallTime: 0.5, cancelled: false, finished: Date(timeIntervalSince1970: 1_800_000_000))
        report.totalPaths = paths
        report.totalWaitingTime = waiting
        report.failedTakes = takes
        report.failedLeaves = leaves
        if !conserved { report.conservation.violations = ["station-1 has -1 bikes and 9 slots"] }
        return SweepRunFigures(report, includingResults: false)
    }

    static func run(users: Int, seed: UInt64, goal: String? = nil) -> SweepRun {
        SweepRun(setting: SweepSetting(users: users, paths: 5, goal: goal), seed: seed)
    }

    @Test func groupsRunsBySettingInTheOrderOfTheirFirstRun() throws {
        let report = SweepReport(network: Self.network, runs: [
            .init(run: Self.run(users: 4, seed: 1), node: "a", figures: Self.figures(paths: 10, waiting: 0.4)),
            .init(run: Self.run(users: 2, seed: 1), node: "b", figures: Self.figures(paths: 6, waiting: 0.2)),
            .init(run: Self.run(users: 4, seed: 2), node: "a", figures: Self.figures(paths: 12, waiting: 0.8)),
            .init(run: Self.run(users: 2, seed: 2), failures: ["attempt 1 on b: lost", "attempt 2 on a: lost"]),
            .init(run: Self.run(users: 4, seed: 3), node: "b", figures: Self.figures(paths: 14, waiting: 1.2, conserved: false)),
        ])
        #expect(report.groups.map(\.setting.users) == [4, 2])
        let four = report.groups[0], two = report.groups[1]
        #expect(four.runs == 3 && four.failedRuns == 0 && four.runsNotConserved == 1)
        #expect(two.runs == 1 && two.failedRuns == 1)
        // Users 4: waiting 0.4, 0.8, 1.2 s in all -> 0.1, 0.2, 0.3 per user.
        let waiting = try #require(four.waitingTimePerUser)
        #expect(abs(waiting.mean - 0.2) < 1e-12)
        #expect(abs(waiting.p50 - 0.2) < 1e-12)
        let paths = try #require(four.totalPaths)
        #expect(paths.mean == 12 && paths.p50 == 12 && abs(paths.p95 - 13.8) < 1e-12)
        // s = 2, t(0.975, 2) = 4.3026527, half width 4.3026527 x 2 / sqrt(3) = 4.9682754.
        let interval = try #require(paths.ci95)
        #expect(abs(interval.lower - (12 - 4.9682754)) < 1e-6 && abs(interval.upper - (12 + 4.9682754)) < 1e-6)
        #expect(two.totalPaths?.ci95 == nil, "one run: no interval")
        #expect(report.runsPerNode == ["a": 2, "b": 2])
        #expect(report.failedRuns == 1 && report.runsNotConserved == 1)
        #expect(report.varied == [.users])
    }

    /// Whether two decoded JSON values are the same (objects compared key by key).
    func sameJSON(_ a: Any?, _ b: Any?) throws -> Bool {
        func text(_ value: Any?) throws -> String {
            String(decoding: try JSONSerialization.data(withJSONObject: [value ?? NSNull()], options: [.sortedKeys]), as: UTF8.self)
        }
        return try text(a) == text(b)
    }

    @Test func runsHaveTheFlagsNamesAndSimulatesKeys() async throws {
        let run = SweepRun(setting: SweepSetting(users: 30, paths: 4, goal: "station-2", moveTime: 0.2, timeScale: 0), seed: 7)
        let simulation = try await Simulation(network: Self.network, options: run.options).run()
        let report = SweepReport(network: Self.network, runs: [
            .init(run: run, node: "n1", figures: SweepRunFigures(simulation, includingResults: false)),
        ])
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(report)) as? [String: Any]
        let top = try #require(json)
        #expect(Set(top.keys) == ["network", "varied", "runs", "groups", "runsPerNode"])
        let object = try #require((top["runs"] as? [[String: Any]])?.first)
        let parameters: Set<String> = ["users", "paths", "seed", "goal", "moveTime", "timeScale", "maxMoves"]
        #expect(parameters.isSubset(of: Set(object.keys)))
        #expect(object["users"] as? Int == 30 && object["paths"] as? Int == 4 && object["seed"] as? Int == 7)
        #expect(object["goal"] as? String == "station-2" && object["moveTime"] as? Double == 0.2 && object["node"] as? String == "n1")
        #expect(object["results"] == nil, "no per-user results unless asked for")

        // Every figure is under the key `simulate --json` uses, with the same value.
        let simulate = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(simulation)) as? [String: Any])
        let figures = Set(object.keys).subtracting(parameters).subtracting(["node", "waitingTimePerUser"])
        #expect(figures == [
            "totalWaitingTime", "totalPaths", "totalMoves", "failedTakes", "failedLeaves", "completedUsers", "usersReachedGoal",
            "usersGaveUp", "nominalDuration", "wallTime", "bikesBefore", "bikesAfter", "conservation",
        ])
        for key in figures {
            #expect(simulate[key] != nil, "simulate --json has \(key)")
            #expect(try sameJSON(simulate[key], object[key]), "\(key)")
        }
        #expect(abs((object["waitingTimePerUser"] as? Double ?? 0) - simulation.totalWaitingTime / 30) < 1e-15)
        #expect((object["conservation"] as? [String: Any])?["holds"] as? Bool == true)
    }

    @Test func groupsHaveTheirSettingCountsAndOneSummaryPerFigure() throws {
        let report = SweepReport(network: Self.network, runs: [
            .init(run: Self.run(users: 4, seed: 1), node: nil, figures: Self.figures(paths: 10, waiting: 0.4, takes: 3, leaves: 1)),
            .init(run: Self.run(users: 4, seed: 2), node: nil, figures: Self.figures(paths: 12, waiting: 0.8, takes: 5, leaves: 2)),
        ])
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(report)) as? [String: Any]
        let group = try #require((json?["groups"] as? [[String: Any]])?.first)
        #expect(Set(group.keys) == [
            "users", "paths", "moveTime", "timeScale", "maxMoves", "runs", "failedRuns", "runsNotConserved",
            "waitingTimePerUser", "totalPaths", "failedTakes", "failedLeaves",
        ])
        #expect(group["runs"] as? Int == 2)
        let takes = try #require(group["failedTakes"] as? [String: Any])
        #expect(Set(takes.keys) == ["mean", "p50", "p95", "ci95", "standardDeviation", "minimum", "maximum"])
        #expect(takes["mean"] as? Double == 4)
        #expect(Set((takes["ci95"] as? [String: Any])?.keys ?? [:].keys) == ["lower", "upper"])
        #expect(SweepFigure.allCases.map(\.key) == ["waitingTimePerUser", "totalPaths", "failedTakes", "failedLeaves"])
    }

    @Test func aFailedRunHasItsReasonsInsteadOfFigures() throws {
        let report = SweepReport(network: Self.network, runs: [.init(run: Self.run(users: 4, seed: 1), failures: ["attempt 1 on a: lost"])])
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(report)) as? [String: Any]
        let run = try #require((json?["runs"] as? [[String: Any]])?.first)
        #expect(run["failures"] as? [String] == ["attempt 1 on a: lost"])
        #expect(run["totalPaths"] == nil && run["node"] == nil && run["waitingTimePerUser"] == nil)
        let group = try #require((json?["groups"] as? [[String: Any]])?.first)
        #expect(group["runs"] as? Int == 0 && group["failedRuns"] as? Int == 1 && group["totalPaths"] == nil)
    }

    @Test func decodesWhatItEncodes() throws {
        var report = SweepReport(network: Self.network, runs: [
            .init(run: Self.run(users: 4, seed: 1, goal: "station-1"), node: "a", figures: Self.figures(paths: 10, waiting: 0.4)),
            .init(run: Self.run(users: 4, seed: 2, goal: "station-1"), failures: ["lost"]),
            .init(run: Self.run(users: 5, seed: 1), node: "b", figures: Self.figures(paths: 11, waiting: 0.5)),
        ], job: "job-1", wallTime: 2.5)
        report.runs[0].figures?.results = [SimulationResult(user: 0)]
        let decoded = try JSONDecoder().decode(SweepReport.self, from: JSONEncoder().encode(report))
        #expect(decoded == report)
        #expect(decoded.varied == [.users, .goal])
    }
}
