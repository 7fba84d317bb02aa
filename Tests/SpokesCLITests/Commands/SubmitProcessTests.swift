import SpokesConcurrency
import Foundation
import SpokesTestKit
import Testing
@testable import SpokesCLI

/// `spokes submit` against real `spokes node` processes on loopback.
@Suite(.timeLimit(.minutes(3)))
struct SubmitProcessTests {
    let cluster = "jobs-\(UUID().uuidString.prefix(8))"
    let discoveryPort = String(UInt16.random(in: 40_000...49_000))
    /// This test's files, removed when the test ends.
    let files: TemporaryDirectory
    let smallNetwork: String

    init() throws {
        files = try TemporaryDirectory()
        smallNetwork = try TestFiles.smallNetwork(in: files)
    }

    func flags(_ extra: [String] = []) -> [String] { ["--cluster", cluster, "--discovery-port", discoveryPort] + extra }

    func startNodes(_ count: Int, extra: (Int) -> [String] = { _ in [] }) async throws -> [NodeProcess] {
        let nodes = try await NodeProcess.start(count) { try await NodeProcess(name: "j\($0)", flags: flags(extra($0))) }
        let probe = ClusterProcessTests()
        for node in nodes {
            var settings = probe.clientSettings
            settings.cluster = cluster
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline {
                let members = (try? await StatusCommand.fetchMembers(from: node.address, settings: settings, timeout: 2)) ?? []
                if members.count == count, members.allSatisfy({ $0.state == "alive" }) { break }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        return nodes
    }

    func submit(to node: NodeProcess, _ workload: [String]) async -> CommandRun {
        await CommandRun.spokes(["submit", "--to", node.address.description, "--json", "--network",
                                 smallNetwork] + workload + flags())
    }

    func report(_ run: CommandRun) -> [String: Any] {
        (try? run.json()) ?? [:]
    }

    func checkExactlyOnce(_ report: [String: Any], users: Int) {
        let results = report["results"] as? [[String: Any]] ?? []
        #expect(results.compactMap { $0["user"] as? Int } == Array(0..<users), "one result per user")
        let conservation = report["conservation"] as? [String: Any] ?? [:]
        #expect(conservation["holds"] as? Bool == true, "\(conservation)")
        #expect(report["bikesBefore"] as? Int == report["bikesAfter"] as? Int)
    }

    @Test func aJobSubmittedToTheSecondNodeRunsOnAllThree() async throws {
        let nodes = try await startNodes(3) { _ in ["--slots", "2"] }
        defer { nodes.forEach { $0.kill(SIGTERM) } }
        let run = await submit(to: nodes[1], ["--users", "30", "--paths", "4", "--time-scale", "0.05", "--seed", "1"])
        let report = report(run)
        #expect(run.status == 0, "\(run.standardError)")
        checkExactlyOnce(report, users: 30)
        #expect(report["completedUsers"] as? Int == 30)
        let perNode = report["tasksPerNode"] as? [String: Int] ?? [:]
        #expect(Set(perNode.keys) == ["j0", "j1", "j2"], "\(perNode)")
        #expect(perNode.values.reduce(0, +) == 30)
        let results = report["results"] as? [[String: Any]] ?? []
        #expect(results.allSatisfy { $0["node"] is String && $0["attempts"] as? Int == 1 })
    }

    @Test func aWorkerKilledMidJobLosesNoUserAndNoBike() async throws {
        let nodes = try await startNodes(3) { _ in ["--slots", "3"] }
        defer { nodes.forEach { $0.kill(SIGKILL) } }
        let job = Task { await submit(to: nodes[0], ["--users", "40", "--paths", "8", "--time-scale", "0.1", "--seed", "2"]) }
        // Kill j2 once it is running users.
        var settings = ClusterProcessTests().clientSettings
        settings.cluster = cluster
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            let me = try await StatusCommand.fetchMembers(from: nodes[2].address, settings: settings, timeout: 2).first
            if (me?.running ?? 0) > 0 { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        nodes[2].kill(SIGKILL)
        let run = await job.value
        let report = report(run)
        #expect(run.status == 0, "\(run.standardError)")
        checkExactlyOnce(report, users: 40)
        #expect(report["completedUsers"] as? Int == 40)
        #expect((report["retries"] as? Int ?? 0) > 0, "the killed worker's users were retried")
        #expect((report["failedUsers"] as? [Any])?.isEmpty == true)
    }

    @Test func aNodeFailingEveryFifthTaskCostsRetriesNotResults() async throws {
        let nodes = try await startNodes(2) { $0 == 1 ? ["--fail-every", "5"] : [] }
        defer { nodes.forEach { $0.kill(SIGTERM) } }
        let run = await submit(to: nodes[0], ["--users", "40", "--paths", "3", "--time-scale", "0.02", "--seed", "3"])
        let report = report(run)
        #expect(run.status == 0, "\(run.standardError)")
        checkExactlyOnce(report, users: 40)
        #expect(report["completedUsers"] as? Int == 40)
        #expect((report["retries"] as? Int ?? 0) > 0)
    }

    @Test func aDeadlineShorterThanASlowNodesDelayMovesItsTasksElsewhere() async throws {
        let nodes = try await startNodes(2) { $0 == 1 ? ["--slow", "3000"] : [] }
        defer { nodes.forEach { $0.kill(SIGTERM) } }
        let run = await submit(to: nodes[0], ["--users", "12", "--paths", "2", "--time-scale", "0", "--seed", "4", "--deadline", "0.5"])
        let report = report(run)
        #expect(run.status == 0, "\(run.standardError)")
        checkExactlyOnce(report, users: 12)
        #expect(report["completedUsers"] as? Int == 12)
        #expect((report["tasksPerNode"] as? [String: Int])?["j1"] == nil, "nothing finished on the slow node")
        #expect((report["retries"] as? Int ?? 0) > 0)
    }

    @Test func twoJobsAtOnceOnDifferentNodesBothFinish() async throws {
        let nodes = try await startNodes(2) { _ in ["--slots", "2"] }
        defer { nodes.forEach { $0.kill(SIGTERM) } }
        async let first = submit(to: nodes[0], ["--users", "20", "--paths", "3", "--time-scale", "0.05", "--seed", "5"])
        async let second = submit(to: nodes[1], ["--users", "20", "--paths", "3", "--time-scale", "0.05", "--seed", "6"])
        let (runA, runB) = await (first, second)
        let reportA = report(runA), reportB = report(runB)
        #expect(runA.status == 0 && runB.status == 0, "\(runA.standardError) \(runB.standardError)")
        checkExactlyOnce(reportA, users: 20)
        checkExactlyOnce(reportB, users: 20)
        #expect(reportA["job"] as? String != reportB["job"] as? String)
    }

    @Test func finishedJobsAreStoredAndTheirReportsCanBeReadAgain() async throws {
        let nodes = try await startNodes(1)
        defer { nodes.forEach { $0.kill(SIGTERM) } }
        let run = await submit(to: nodes[0], ["--users", "5", "--paths", "2", "--time-scale", "0", "--seed", "7"])
        let job = try #require(report(run)["job"] as? String)
        let list = await CommandRun.spokes(["jobs", "--to", nodes[0].address.description, "--json"] + flags())
        #expect(list.status == 0, "\(list.standardError)")
        let jobs = try #require(try list.json()["jobs"] as? [[String: Any]])
        #expect(jobs.contains { $0["job"] as? String == job && $0["completedUsers"] as? Int == 5 })
        let again = await CommandRun.spokes(["result", job, "--to", nodes[0].address.description, "--json"] + flags())
        #expect(again.status == 0, "\(again.standardError)")
        #expect(try again.json()["job"] as? String == job)
        #expect(try again.json()["totalPaths"] as? Int == report(run)["totalPaths"] as? Int)
        let page = files.file("report.html")
        let html = await CommandRun.spokes(["result", job, "--to", nodes[0].address.description, "--html", page] + flags())
        #expect(html.status == 0, "\(html.standardError)")
        #expect(html.standardOutput.contains("Users completed  5 of 5"), "the summary is still printed")
        let written = try String(contentsOfFile: page, encoding: .utf8)
        #expect(written.hasPrefix("<!doctype html>") || written.hasPrefix("<!DOCTYPE html>"))
        #expect(written.contains(job))
        #expect(!written.contains("<script"), "the report needs no script")
        let missing = await CommandRun.spokes(["result", "job-none", "--to", nodes[0].address.description] + flags())
        #expect(missing.status == 1)
        #expect(missing.standardError.contains("job job-none is not in the job store"))
    }

    @Test func ctrlCCancelsTheJobOnEveryNodeAndStillReports() async throws {
        let nodes = try await startNodes(2) { _ in ["--slots", "2"] }
        defer { nodes.forEach { $0.kill(SIGTERM) } }
        guard let executable = SpokesExecutableTests.executable else { throw CocoaError(.fileNoSuchFile) }
        let process = Process()
        process.executableURL = executable
        process.arguments = ["submit", "--to", nodes[0].address.description, "--users", "40", "--paths", "1000",
                             "--time-scale", "1", "--json", "--progress", "--network", smallNetwork] + flags()
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        DispatchQueue.global().asyncAfter(deadline: .now() + 60) { if process.isRunning { process.terminate() } }
        // Once users run on both nodes, interrupt.
        let sawBoth = await readOutput(of: err.fileHandleForReading, until: "j0 3, j1 3").contains("j0 3, j1 3")
        #expect(sawBoth, "progress showed users on both nodes, each with its 2 slots and 1 queue place taken")
        kill(process.processIdentifier, SIGINT)
        let data = await runBlocking("test.output") { out.fileHandleForReading.readDataToEndOfFile() }
        await runBlocking("test.wait") { process.waitUntilExit() }
        #expect(process.terminationStatus == 130)
        let cancelled = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(cancelled["cancelled"] as? Bool == true)
        #expect((cancelled["conservation"] as? [String: Any])?["holds"] as? Bool == true)
        // Every node stops running the job's users.
        var settings = ClusterProcessTests().clientSettings
        settings.cluster = cluster
        for node in nodes {
            let deadline = ContinuousClock.now + .seconds(10)
            var running = -1
            while ContinuousClock.now < deadline {
                running = try await StatusCommand.fetchMembers(from: node.address, settings: settings, timeout: 2).first?.running ?? -1
                if running == 0 { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(running == 0, "\(node.name) still runs \(running) tasks")
        }
    }

    @Test func badJobParametersAreRefusedBeforeAnythingRuns() async throws {
        let nodes = try await startNodes(1)
        defer { nodes.forEach { $0.kill(SIGTERM) } }
        let usage = await CommandRun.spokes(["submit", "--to", nodes[0].address.description, "--users", "0"] + flags())
        #expect(usage.status == 2)
        #expect(usage.standardError.contains("--users"))
        let goal = await CommandRun.spokes(["submit", "--to", nodes[0].address.description, "--goal", "nowhere"] + flags())
        #expect(goal.status == 1)
        #expect(goal.standardError.contains("goal station 'nowhere'"))
        var settings = ClusterProcessTests().clientSettings
        settings.cluster = cluster
        #expect(try await StatusCommand.fetchMembers(from: nodes[0].address, settings: settings, timeout: 2).first?.completed == 0)
    }
}

/// Small network files for process tests.
enum TestFiles {
    /// Eight Milano-like stations (contended, 4 bikes short of 40 users), written into `folder`.
    static func smallNetwork(in folder: TemporaryDirectory) throws -> String {
        let json = """
        {"network": {"id": "small", "name": "Small", "stations": [
        \((0..<8).map { #"{"id": "s\#($0)", "name": "S\#($0)", "latitude": 45.4, "longitude": 9.1, "free_bikes": \#(2 + $0 % 4), "empty_slots": \#(3 + $0 % 3)}"# }.joined(separator: ",\n"))
        ]}}
        """
        return try folder.write(json, to: "small.json")
    }
}
