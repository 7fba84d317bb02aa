import Foundation
import SpokesBikes
import Testing
@testable import SpokesCLI

@Suite struct SweepReportFormatterTests {
    static let network = Network.synthetic(stations: 3, bikes: 4, emptySlots: 4)

    static func figures(paths: Int, waiting: Double, takes: Int, leaves: Int) -> SweepRunFigures {
        var report = SimulationReport(
            network: network, finalStations: network.stations, options: SimulationOptions(users: 10, paths: 2), results: [],
            wallTime: 0.1, cancelled: false, finished: Date(timeIntervalSince1970: 1_800_000_000))
        report.totalPaths = paths
        report.totalWaitingTime = waiting
        report.failedTakes = takes
        report.failedLeaves = leaves
        return SweepRunFigures(report, includingResults: false)
    }

    static func report() -> SweepReport {
        func run(_ users: Int, _ seed: UInt64) -> SweepRun { SweepRun(setting: SweepSetting(users: users, paths: 2), seed: seed) }
        return SweepReport(network: network, runs: [
            .init(run: run(10, 1), node: "n1", figures: figures(paths: 20, waiting: 0.3, takes: 2, leaves: 1)),
            .init(run: run(10, 2), node: "n2", figures: figures(paths: 20, waiting: 0.5, takes: 4, leaves: 1)),
            .init(run: run(10, 3), node: "n1", figures: figures(paths: 20, waiting: 0.4, takes: 3, leaves: 1)),
            .init(run: run(20, 1), node: "n2", figures: figures(paths: 40, waiting: 1.2, takes: 9, leaves: 3)),
            .init(run: run(20, 2), failures: ["attempt 1 on n1: lost", "attempt 2 on n2: lost"]),
        ], job: "job-7", wallTime: 2)
    }

    @Test func summarisesEachGroupInATable() {
        let text = SweepReportFormatter.summary(Self.report())
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0] == "Synthetic network (synthetic): 3 stations · 5 runs in 2 groups · varied: users")
        #expect(lines.contains("Runs per node: n1 2, n2 2"))
        #expect(lines.contains("Job: job-7"))
        #expect(lines.contains("Wall time: 2.00 s (2.0 runs/s)"))
        #expect(lines.contains("Failed runs: 1 (every attempt failed; see --json)"))
        #expect(lines.contains("users 10 · paths 2 · move time 0.1 s · time scale 0 · 3 runs"))
        // Waiting per user 0.03, 0.05, 0.04 s: mean 0.04, s 0.01, half width 4.3026527 x 0.01 / sqrt(3) = 0.0248.
        #expect(lines.contains("  waiting time per user  0.040 s  0.040 s  0.049 s  0.015 s to 0.065 s"), "\(text)")
        #expect(lines.contains("  paths ridden                20       20       20  20 to 20"), "\(text)")
        #expect(lines.contains("  failed takes                 3        3      3.9  0.5 to 5.5"), "\(text)")
        #expect(lines.contains("users 20 · paths 2 · move time 0.1 s · time scale 0 · 1 run (1 failed)"))
        #expect(lines.contains("  paths ridden                40       40       40  — (one run)"), "\(text)")
        #expect(!lines.contains { $0.hasSuffix(" ") }, "no trailing spaces")
    }

    @Test func saysWhenBikesWereNotConservedAndCapsLongReports() {
        var figures = Self.figures(paths: 1, waiting: 0, takes: 0, leaves: 0)
        figures.conservation.violations = ["station-1 has -1 bikes"]
        let runs = (0..<(SweepReportFormatter.listedGroups + 3)).map { users in
            SweepReport.Run(run: SweepRun(setting: SweepSetting(users: users + 1, paths: 1), seed: 1), node: nil, figures: figures)
        }
        let text = SweepReportFormatter.summary(SweepReport(network: Self.network, runs: runs))
        #expect(text.contains("NOT CONSERVED: 53 runs lost or made bikes"))
        #expect(text.contains("users 1 · paths 1 · move time 0.1 s · time scale 0 · 1 run · 1 NOT CONSERVED"))
        #expect(text.contains("... and 3 more groups (see --json)"))
        #expect(!text.contains("users 51 ·"))
        #expect(!text.contains("only the seed varies"))
    }

    @Test func jsonHasRunsAndGroupsWithSortedKeys() throws {
        let text = try SweepReportFormatter.json(Self.report())
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect((object["runs"] as? [Any])?.count == 5)
        #expect((object["groups"] as? [Any])?.count == 2)
        let topLevel = ["groups", "job", "network", "runs", "runsPerNode", "varied", "wallTime"].map { key in
            text.range(of: "\n  \"\(key)\" :")?.lowerBound
        }
        #expect(topLevel.allSatisfy { $0 != nil } && topLevel.compactMap { $0 } == topLevel.compactMap { $0 }.sorted(), "keys sorted")
    }
}
