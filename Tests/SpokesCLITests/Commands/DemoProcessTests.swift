import Foundation
import SpokesCluster
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SpokesConcurrency
import SpokesTestKit
import Testing

/// `spokes demo` as a user runs it: a child process that starts its own nodes.
@Suite(.processLane, .timeLimit(.minutes(2)))
struct DemoProcessTests {
    /// Where this test's demo keeps its job records (never the user's ~/.spokes/demo).
    let records: TemporaryDirectory

    init() throws {
        records = try TemporaryDirectory()
    }

    @Test func theDemoWithADashboardServesItKeepsTheClusterUpAndStopsOnCtrlC() async throws {
        let executable = try #require(SpokesExecutableTests.executable)
        let process = Process()
        process.executableURL = executable
        process.arguments = ["demo", "--dashboard", "--dashboard-port", "0", "--nodes", "2", "--users", "20", "--paths", "2",
                             "--time-scale", "0", "--seed", "3", "--data-directory", records.path]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try ProcessLaunch.run(process)
        defer { if process.isRunning { kill(process.processIdentifier, SIGINT) } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 90) { if process.isRunning { process.terminate() } }
        let reader = err.fileHandleForReading
        let log = await readOutput(of: reader, until: "stay up until you press Ctrl-C")
        try #require(log.contains("stay up until you press Ctrl-C"), "the demo did not wait with its dashboard up: \(log)")
        let address = try #require(log.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix("http://127.0.0.1:") }.map(String.init), "\(log)")
        let url = try #require(URL(string: address))
        #expect(address.contains("?token="), "the demo's cluster has a secret, so its address carries the token")
        // The job is done, and the still-running dashboard shows it finished.
        let token = String(address.split(separator: "=").last ?? "")
        var request = URLRequest(url: try #require(URL(string: "/api/jobs", relativeTo: url)))
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        let body = Promise<Data, any Error>()
        URLSession.shared.dataTask(with: request) { data, _, error in
            if let data { body.resolve(data) } else { body.reject(error ?? URLError(.badServerResponse)) }
        }.resume()
        let jobs = try await body.future.value
        let list = try #require(try JSONSerialization.jsonObject(with: jobs) as? [String: Any])
        let job = try #require((list["jobs"] as? [[String: Any]])?.first)
        #expect(job["state"] as? String == "finished")
        #expect(job["done"] as? Int == 20)

        kill(process.processIdentifier, SIGINT)
        let rest = await runBlocking("test.demo-end") { String(decoding: Data(DescriptorReading.all(of: reader.fileDescriptor)), as: UTF8.self) }
        await runBlocking("test.wait") { process.waitUntilExit() }
        #expect(process.terminationStatus == 0, "\(rest)")
        #expect(rest.contains("demo: stopping the cluster"))
        let report = await runBlocking("test.out") { String(decoding: Data(DescriptorReading.all(of: out.fileHandleForReading.fileDescriptor)), as: UTF8.self) }
        #expect(report.contains("Users completed  20 of 20"))
    }

    @Test func theNodesOfAKilledDemoStopByThemselves() async throws {
        let executable = try #require(SpokesExecutableTests.executable)
        let process = Process()
        process.executableURL = executable
        process.arguments = ["demo", "--nodes", "2", "--users", "50", "--paths", "100", "--time-scale", "1", "--data-directory", records.path]
        let err = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = err
        try ProcessLaunch.run(process)
        let log = await readOutput(of: err.fileHandleForReading, until: "demo: submitting")
        let cluster = try #require(log.split(separator: "'").dropFirst().first.map(String.init), "\(log)")
        #expect(!nodeProcesses(of: cluster).isEmpty, "the demo's nodes run")
        // SIGKILL: the demo cannot stop its nodes; they must notice and stop themselves.
        kill(process.processIdentifier, SIGKILL)
        await runBlocking("test.wait") { process.waitUntilExit() }
        let deadline = ContinuousClock.now + .seconds(10)
        while !nodeProcesses(of: cluster).isEmpty, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        let left = nodeProcesses(of: cluster)
        #expect(left.isEmpty, "nodes of cluster \(cluster) still run 10 s after their demo was killed: \(left)")
        for pid in left { kill(pid, SIGKILL) }
    }

    /// README's order: the demo, then `spokes result JOB --data-directory DIR --html FILE`
    /// once its nodes are gone.
    @Test func aDemoJobsReportCanBeReadAgainAfterTheDemo() async throws {
        let executable = try #require(SpokesExecutableTests.executable)
        let process = Process()
        process.executableURL = executable
        process.arguments = ["demo", "--nodes", "2", "--users", "10", "--paths", "2", "--time-scale", "0", "--seed", "4",
                             "--data-directory", records.path]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try ProcessLaunch.run(process)
        DispatchQueue.global().asyncAfter(deadline: .now() + 60) { if process.isRunning { process.terminate() } }
        async let errors = runBlocking("test.demo-err") { String(decoding: Data(DescriptorReading.all(of: err.fileHandleForReading.fileDescriptor)), as: UTF8.self) }
        let output = await runBlocking("test.demo-out") { String(decoding: Data(DescriptorReading.all(of: out.fileHandleForReading.fileDescriptor)), as: UTF8.self) }
        let log = await errors
        await runBlocking("test.wait") { process.waitUntilExit() }
        #expect(process.terminationStatus == 0, "\(log)")
        let job = try #require(output.firstMatch(of: #/Job +(job-[0-9a-f]{8})\n/#).map { String($0.1) }, "a job id of fixed width: \(output)")
        #expect(log.contains("'spokes result \(job) --data-directory \(records.path)'"), "\(log)")
        let page = records.file("job.html")
        let again = await CommandRun.spokes(["result", job, "--data-directory", records.path, "--html", page])
        #expect(again.status == 0, "\(again.standardError)")
        #expect(again.standardOutput.contains("Job              \(job)") && again.standardOutput.contains("Users completed  10 of 10"), "\(again.standardOutput)")
        #expect(try String(contentsOfFile: page, encoding: .utf8).contains(job))
        let missing = await CommandRun.spokes(["result", "job-00000000", "--data-directory", records.path])
        #expect(missing.status == 1 && missing.standardError.contains("job job-00000000 is not in \(records.path)/jobs.jsonl"), "\(missing.standardError)")
    }

    /// PIDs of `spokes node` processes of `cluster`, from /proc.
    func nodeProcesses(of cluster: String) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry in
            guard let pid = Int32(entry),
                  let command = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { return nil }
            let arguments = command.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            return arguments.contains("node") && arguments.contains(cluster) ? pid : nil
        }
    }
}
