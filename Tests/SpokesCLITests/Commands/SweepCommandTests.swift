import Foundation
import SpokesTestKit
import Testing
@testable import SpokesCLI

/// `spokes sweep` against in-process nodes.
@Suite(.processLane, .timeLimit(.minutes(2)))
struct SweepCommandTests {
    @Test func everyRunGivesWhatSimulateGivesForTheSameParametersAndSeedWhereverItRan() async throws {
        let nodes = try await RunCommandTests().startNodes()
        let sweep = await CommandRun.spokes(["sweep", "--to", nodes[0].address, "--users", "10,20", "--paths", "3", "--seeds", "1-3", "--json"])
        for node in nodes { #expect(await node.stop() == 0) }
        #expect(sweep.status == 0, "\(sweep.standardError)")
        let report = try sweep.json()
        let runs = try #require(report["runs"] as? [[String: Any]])
        #expect(runs.count == 6)
        #expect((report["groups"] as? [[String: Any]])?.count == 2)
        #expect(Set(runs.compactMap { $0["node"] as? String }).isSubset(of: ["r0", "r1"]))
        for run in runs {
            let users = try #require(run["users"] as? Int)
            let seed = try #require(run["seed"] as? Int)
            let simulate = await CommandRun.spokes([
                "simulate", "--users", "\(users)", "--paths", "3", "--seed", "\(seed)", "--workers", "1", "--time-scale", "0", "--json",
            ])
            let expected = try simulate.json()
            for key in ["totalWaitingTime", "totalPaths", "totalMoves", "failedTakes", "failedLeaves", "completedUsers"] {
                #expect("\(run[key] ?? "missing")" == "\(expected[key] ?? "missing")", "\(key) of users \(users), seed \(seed)")
            }
        }
    }

    @Test func aSweepIsStoredAsAJobWhoseReportPrintsAgain() async throws {
        let nodes = try await RunCommandTests().startNodes()
        let sweep = await CommandRun.spokes(["sweep", "--to", nodes[0].address, "--users", "5", "--paths", "2", "--seeds", "1-4", "--json"])
        let job = try #require(sweep.standardError.firstMatch(of: /job (sweep-[0-9a-f]{8}) accepted/).map { String($0.1) }, "\(sweep.standardError)")
        let again = await CommandRun.spokes(["result", job, "--to", nodes[0].address, "--json"])
        let jobs = await CommandRun.spokes(["jobs", "--to", nodes[0].address])
        for node in nodes { #expect(await node.stop() == 0) }
        #expect(sweep.status == 0 && again.status == 0, "\(again.standardError)")
        let runs = try #require(try sweep.json()["runs"] as? [[String: Any]])
        let stored = try #require(try again.json()["runs"] as? [[String: Any]])
        #expect(stored.map { $0["seed"] as? Int } == runs.map { $0["seed"] as? Int } && stored.count == 4)
        #expect(stored.map { $0["totalWaitingTime"] as? Double } == runs.map { $0["totalWaitingTime"] as? Double })
        #expect(jobs.standardOutput.contains(job) && jobs.standardOutput.contains("bikes.sweep-run"), "\(jobs.standardOutput)")
    }

    @Test(arguments: [
        (["--users", "10"], "--seeds"),
        (["--seeds", "5-2"], "--seeds"),
        (["--seeds", "1", "--users", "0"], "--users"),
        (["--seeds", "1", "--time-scale", "1-2"], "--time-scale"),
        (["--seeds", "1,1"], "--seeds"),
    ])
    func aBadListExitsTwoNamingItsFlagBeforeAnyNodeIsAsked(flags: [String], named flag: String) async {
        let sweep = await CommandRun.spokes(["sweep", "--to", "127.0.0.1:9"] + flags)
        #expect(sweep.status == 2, "\(sweep.standardError)")
        #expect(sweep.standardError.contains(flag), "\(sweep.standardError)")
    }
}
