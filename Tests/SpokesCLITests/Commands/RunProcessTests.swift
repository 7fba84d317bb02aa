import Foundation
import SpokesTestKit
import Testing
@testable import SpokesCLI

/// `spokes run` against real `spokes node` processes.
extension ClusterProcessTests {
    /// The id of the `bench.sleep` map the node at `address` lists as running, once at
    /// least `count` of its tasks ended (waits at most 15 s).
    func runningMap(at address: String, endedAtLeast count: Int) async throws -> String {
        try await runningJob(at: address, done: count, within: 15, "a bench.sleep map") { $0["kind"] as? String == "bench.sleep" }
    }

    @Test func runOverNodeProcessesLosesNoTaskWhenANodeIsKilledMidRun() async throws {
        let nodes = try await NodeProcess.start(2) { try await NodeProcess(name: "k\($0)", flags: flags + ["--slots", "2"]) }
        defer { nodes.forEach { $0.kill(SIGKILL) } }
        try await waitUntil(nodes[0], "2 alive members") { $0.count == 2 && $0.allSatisfy { $0.state == "alive" } }
        let folder = try TemporaryDirectory()
        // 1.5 s tasks on 4 slots: k1 is still running some when the poll sees it running.
        let inputs = try folder.write(String(repeating: "1.5\n", count: 12), to: "inputs.jsonl")
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
        #expect(result.standardOutput == String(repeating: "1.5\n", count: 12))
        #expect(result.standardError.contains("12 of 12 tasks of bench.sleep succeeded"), "\(result.standardError)")
        #expect(!result.standardError.contains(", 0 retries"), "k1's tasks were retried: \(result.standardError)")
    }

    /// Issue 19 §2, for jobs of tasks: the coordinator of a map is killed (-9) mid-job; its
    /// client says so and exits; started again on its data directory, the node runs the
    /// tasks that had not ended, and `result --wait` prints every output once.
    @Test func aMapWhoseCoordinatorIsKilledRunsOnWhenItStartsAgain() async throws {
        let folder = try TemporaryDirectory()
        let environment = ["SPOKES_DATA_DIRECTORY": folder.file("r0")]
        let coordinator = try await NodeProcess(name: "r0", flags: flags + ["--slots", "2"], environment: environment)
        let worker = try await NodeProcess(name: "r1", flags: flags + ["--slots", "2"])
        defer { [coordinator, worker].forEach { $0.kill(SIGKILL) } }
        try await waitUntil(coordinator, "2 alive members") { $0.count == 2 && $0.allSatisfy { $0.state == "alive" } }
        // Tasks of 1.1 to 1.8 s on 4 slots: the map still runs when a slowed poll sees 2 ended.
        let inputs = try folder.write((1...8).map { "1.\($0)\n" }.joined(), to: "inputs.jsonl")
        let address = coordinator.address.description
        let map = Task { await CommandRun.spokes(["map", "bench.sleep", "--to", address, "--inputs", inputs, "--deadline", "20"]) }
        let job = try await runningMap(at: address, endedAtLeast: 2)
        coordinator.kill(SIGKILL)
        let lost = await map.value
        #expect(lost.status == 1 && lost.standardError.contains("lost the coordinator of job \(job)"), "\(lost.standardError)")
        let again = try await NodeProcess(name: "r0", flags: flags + ["--slots", "2"], environment: environment)
        defer { again.kill(SIGKILL) }
        let result = await CommandRun.spokes(["result", job, "--to", again.address.description, "--wait", "--json"])
        #expect(result.status == 0, "\(result.standardError)")
        let lines = result.standardOutput.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(lines.map { $0["line"] as? Int } == (1...8).map { $0 }, "every task once, in input order: \(result.standardOutput)")
        #expect(lines.compactMap { $0["output"] as? Double } == (1...8).map { Double("1.\($0)")! })
    }

    /// Issue 19 §1 and §4, for jobs of tasks: three nodes; the coordinator of a map is
    /// killed (-9) mid-job and stays dead. The job's replicas elect another leader, which
    /// runs the tasks with no committed end; the client follows the job there and exits 0
    /// with every output once; `result --wait` from any node prints them too.
    @Test func aMapWhoseCoordinatorIsKilledIsTakenOverByAnotherNode() async throws {
        let nodes = try await NodeProcess.start(3) { try await NodeProcess(name: "t\($0)", flags: flags + ["--slots", "2"]) }
        defer { nodes.forEach { $0.kill(SIGKILL) } }
        try await waitUntil(nodes[0], "3 alive members") { $0.count == 3 && $0.allSatisfy { $0.state == "alive" } }
        let folder = try TemporaryDirectory()
        // 24 tasks of 1 to 2 s on 6 slots: several seconds, so a poll slowed by a loaded
        // machine still finds the map running.
        let inputs = try folder.write((1...24).map { "1.\($0 % 10)\n" }.joined(), to: "inputs.jsonl")
        let address = nodes[0].address.description
        let map = Task { await CommandRun.spokes(["map", "bench.sleep", "--to", address, "--inputs", inputs, "--deadline", "20"]) }
        let job = try await runningMap(at: address, endedAtLeast: 2)
        nodes[0].kill(SIGKILL)
        // The client follows the job to the member that took it over, and ends as if
        // nothing had happened.
        let followed = await map.value
        #expect(followed.status == 0, "\(followed.standardError)")
        #expect(followed.standardError.contains("lost the coordinator of job \(job), t0") && followed.standardError.contains("looking for the member that took the job over"),
                "\(followed.standardError)")
        #expect(followed.standardOutput == (1...24).map { $0 % 10 == 0 ? "1\n" : "1.\($0 % 10)\n" }.joined(),
                "every output once, in input order: \(followed.standardOutput)")
        let result = await CommandRun.spokes(["result", job, "--to", nodes[1].address.description, "--wait", "--json"])
        #expect(result.status == 0, "\(result.standardError)")
        let lines = result.standardOutput.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(lines.map { $0["line"] as? Int } == (1...24).map { $0 }, "every task once, in input order: \(result.standardOutput)")
        #expect(Set(lines.compactMap { $0["node"] as? String }).isSubset(of: ["t0", "t1", "t2"]))
        // The finished job's group is removed from the survivors: no timers, no disk.
        for node in nodes.dropFirst() {
            let raft = node.raftDirectory
            try await eventually("\(node.name) removed the finished job's group", within: 25) {
                (try? FileManager.default.contentsOfDirectory(atPath: raft))?.allSatisfy { !$0.hasPrefix("job-") } ?? false
            }
        }
    }

    /// Issue 19 §2, for jobs of tasks: every node of a 3-node cluster is killed (-9)
    /// mid-map and started again on its data directory; the job's replicas reopen its
    /// group, elect a leader that runs the tasks with no committed end, and `result
    /// --wait` prints every output once.
    @Test func aMapRunsOnWhenTheWholeClusterIsKilledAndStartedAgain() async throws {
        let folder = try TemporaryDirectory()
        func start(_ index: Int) async throws -> NodeProcess {
            try await NodeProcess(name: "w\(index)", flags: flags + ["--slots", "2"], environment: ["SPOKES_DATA_DIRECTORY": folder.file("w\(index)")])
        }
        var nodes: [NodeProcess] = []
        for index in 0..<3 { nodes.append(try await start(index)) }
        defer { nodes.forEach { $0.kill(SIGKILL) } }
        try await waitUntil(nodes[0], "3 alive members") { $0.count == 3 && $0.allSatisfy { $0.state == "alive" } }
        let inputs = try folder.write(String(repeating: "1.0\n", count: 12), to: "inputs.jsonl")
        let address = nodes[0].address.description
        let map = Task { await CommandRun.spokes(["map", "bench.sleep", "--to", address, "--inputs", inputs, "--deadline", "20"]) }
        let job = try await runningMap(at: address, endedAtLeast: 0)
        for node in nodes { node.kill(SIGKILL) }
        _ = await map.value
        for node in nodes { _ = await node.waitForExit() }
        nodes = []
        for index in 0..<3 { nodes.append(try await start(index)) }
        let result = await CommandRun.spokes(["result", job, "--to", nodes[1].address.description, "--wait", "--json"])
        #expect(result.status == 0, "\(result.standardError)")
        let lines = result.standardOutput.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(lines.map { $0["line"] as? Int } == (1...12).map { $0 }, "every task once, in input order: \(result.standardOutput)")
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
