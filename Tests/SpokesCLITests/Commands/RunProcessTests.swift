import Foundation
import SpokesTestKit
import Testing
@testable import SpokesCLI

/// `spokes run` against real `spokes node` processes.
extension ClusterProcessTests {
    @Test func runOverNodeProcessesLosesNoTaskWhenANodeIsKilledMidRun() async throws {
        let nodes = try await NodeProcess.start(2) { try await NodeProcess(name: "k\($0)", flags: flags + ["--slots", "2"]) }
        defer { nodes.forEach { $0.kill(SIGKILL) } }
        try await waitUntil(nodes[0], "2 alive members") { $0.count == 2 && $0.allSatisfy { $0.state == "alive" } }
        let folder = try TemporaryDirectory()
        let inputs = try folder.write(String(repeating: "0.5\n", count: 12), to: "inputs.jsonl")
        let address = nodes[0].address.description
        let run = Task { await CommandRun.spokes(["run", "bench.sleep", "--to", address, "--inputs", inputs, "--deadline", "20"]) }
        // Ask k1 for its own figures until it runs a task, then kill it.
        let clock = ContinuousClock()
        let start = clock.now
        while try await members(of: nodes[1]).first?.running ?? 0 == 0 {
            guard clock.now - start < .seconds(10) else {
                Issue.record("k1 ran no task within 10 s")
                break
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        nodes[1].kill(SIGKILL)
        let result = await run.value
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput == String(repeating: "0.5\n", count: 12))
        #expect(result.standardError.contains("12 of 12 tasks of bench.sleep succeeded"), "\(result.standardError)")
        #expect(!result.standardError.contains(", 0 retries"), "k1's tasks were retried: \(result.standardError)")
    }

    @Test func aSweepReportsEveryRunOnceWhenANodeIsKilledMidSweep() async throws {
        let nodes = try await NodeProcess.start(2) { try await NodeProcess(name: "w\($0)", flags: flags + ["--slots", "2"]) }
        defer { nodes.forEach { $0.kill(SIGKILL) } }
        try await waitUntil(nodes[0], "2 alive members") { $0.count == 2 && $0.allSatisfy { $0.state == "alive" } }
        let address = nodes[0].address.description
        // Runs that sleep (time scale 1): long enough to be running when w1 is killed.
        let sweep = Task {
            await CommandRun.spokes([
                "sweep", "--to", address, "--users", "4", "--paths", "2", "--time-scale", "1", "--move-time", "0.05",
                "--seeds", "1-12", "--deadline", "20", "--json",
            ])
        }
        try await eventually("w1 runs a sweep run", within: 10) { try await members(of: nodes[1]).first?.running ?? 0 > 0 }
        nodes[1].kill(SIGKILL)
        let result = await sweep.value
        #expect(result.status == 0, "\(result.standardError)")
        let runs = try #require(try result.json()["runs"] as? [[String: Any]])
        #expect(runs.compactMap { $0["seed"] as? Int }.sorted() == Array(1...12), "every run once")
        #expect(runs.allSatisfy { $0["totalPaths"] != nil }, "every run has its figures")
    }
}
