import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SpokesConcurrency
import Testing

/// `spokes demo` as a user runs it: a child process that starts its own nodes.
@Suite(.timeLimit(.minutes(2)))
struct DemoProcessTests {
    @Test func theDemoWithADashboardServesItKeepsTheClusterUpAndStopsOnCtrlC() async throws {
        let executable = try #require(SpokesExecutableTests.executable)
        let process = Process()
        process.executableURL = executable
        process.arguments = ["demo", "--dashboard", "--dashboard-port", "0", "--nodes", "2", "--users", "20", "--paths", "2",
                             "--time-scale", "0", "--seed", "3"]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
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
        let rest = await runBlocking("test.demo-end") { String(decoding: reader.readDataToEndOfFile(), as: UTF8.self) }
        await runBlocking("test.wait") { process.waitUntilExit() }
        #expect(process.terminationStatus == 0, "\(rest)")
        #expect(rest.contains("demo: stopping the cluster"))
        let report = await runBlocking("test.out") { String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) }
        #expect(report.contains("Users completed  20 of 20"))
    }
}
