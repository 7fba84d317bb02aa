import Foundation
import SpokesBikes
import Testing
@testable import SpokesCLI

/// `spokes sweep`'s promise, checked against the command users compare it with.
@Suite struct SweepRunVersusSimulateTests {
    /// The promise of `spokes sweep`: a run's figures are exactly `spokes simulate
    /// --workers 1`'s, compared here with the command's own JSON.
    @Test func aSweepRunsFiguresAreThoseSimulateWithOneWorkerPrints() async throws {
        let plan = try SweepPlan(network: .bundled(name: .milano), lists: [.users: "150", .paths: "4", .goal: "b5262607c8a44db673b2f9acd3ddeede", .moveTime: "0.2", .seed: "41"])
        let figures = try await SweepRunTask().run(plan.taskInput(forRun: 0))
        let simulate = await CommandRun.spokes(
            "simulate", "--users", "150", "--paths", "4", "--goal", "b5262607c8a44db673b2f9acd3ddeede", "--move-time", "0.2",
            "--time-scale", "0", "--seed", "41", "--workers", "1", "--json")
        #expect(simulate.status == 0, "\(simulate.standardError)")
        let printed = try simulate.json()
        let run = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(figures)) as? [String: Any])
        for key in run.keys where key != "wallTime" {
            let a = try JSONSerialization.data(withJSONObject: [run[key]], options: .sortedKeys)
            let b = try JSONSerialization.data(withJSONObject: [printed[key] ?? NSNull()], options: .sortedKeys)
            #expect(a == b, "\(key): sweep \(String(decoding: a, as: UTF8.self)), simulate \(String(decoding: b, as: UTF8.self))")
        }
        #expect((printed["usersReachedGoal"] as? Int ?? 0) > 0, "the goal mattered")
    }
}
