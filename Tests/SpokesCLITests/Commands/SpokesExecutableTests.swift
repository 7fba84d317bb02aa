import Foundation
import SpokesCluster
import SpokesConcurrency
import SpokesTestKit
import Testing

/// Runs the built `spokes` binary as a user would, to check what only a real process
/// shows: the exit status and which stream gets what.
@Suite(.processLane) struct SpokesExecutableTests {
    /// `.build/<config>/spokes`, next to the test bundle.
    static var executable: URL? {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("spokes")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory.deleteLastPathComponent()
        }
        return nil
    }

    struct Outcome {
        var status: Int32
        var standardOutput: String
        var standardError: String
    }

    func spokes(_ arguments: [String]) async throws -> Outcome {
        let executable = try #require(Self.executable, "the spokes binary was not found beside the test bundle")
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try ProcessLaunch.run(process)
        async let outData = runBlocking("test.stdout") { Data(DescriptorReading.all(of: out.fileHandleForReading.fileDescriptor)) }
        async let errData = runBlocking("test.stderr") { Data(DescriptorReading.all(of: err.fileHandleForReading.fileDescriptor)) }
        let (outText, errText) = await (outData, errData)
        await runBlocking("test.wait") { process.waitUntilExit() }
        return Outcome(
            status: process.terminationStatus,
            standardOutput: String(decoding: outText, as: UTF8.self),
            standardError: String(decoding: errText, as: UTF8.self))
    }

    @Test func simulateSucceedsWithJSONOnStdoutOnly() async throws {
        let outcome = try await spokes(["simulate", "--users", "5", "--paths", "2", "--time-scale", "0", "--json"])
        #expect(outcome.status == 0, "stderr: \(outcome.standardError)")
        #expect(outcome.standardOutput.hasPrefix("{"))
        #expect(outcome.standardError.isEmpty, "no progress line when stderr is not a terminal")
    }

    @Test func usageErrorExitsTwo() async throws {
        let outcome = try await spokes(["simulate", "--users", "0"])
        #expect(outcome.status == 2)
        #expect(outcome.standardError.contains("--users"))
    }

    @Test func runtimeErrorExitsOne() async throws {
        let outcome = try await spokes(["simulate", "--network", "Madrid.json"])
        #expect(outcome.status == 1)
        #expect(outcome.standardError.contains("file not found: Madrid.json"))
    }

    @Test func interruptStopsTheRunAndStillReports() async throws {
        let executable = try #require(Self.executable)
        let process = Process()
        process.executableURL = executable
        // Real-time users that would ride for minutes.
        process.arguments = ["simulate", "--users", "50", "--paths", "1000", "--time-scale", "1", "--json", "--progress"]
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try ProcessLaunch.run(process)
        // A watchdog, so a hung process fails the test instead of hanging it.
        DispatchQueue.global().asyncAfter(deadline: .now() + 30) { if process.isRunning { process.terminate() } }
        // The first progress line is drawn once the Ctrl-C handler is installed.
        let errors = await readOutput(of: err.fileHandleForReading, until: "users 0/50")
        try #require(errors.contains("users 0/50"), "spokes ended before printing progress: \(errors)")
        kill(process.processIdentifier, SIGINT)
        let data = await runBlocking("test.output") { Data(DescriptorReading.all(of: out.fileHandleForReading.fileDescriptor)) }
        await runBlocking("test.wait") { process.waitUntilExit() }
        #expect(process.terminationStatus == 130, "expected exit 130 after Ctrl-C")
        let report = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(report["cancelled"] as? Bool == true)
        #expect((report["completedUsers"] as? Int ?? 50) < 50)
        let conservation = try #require(report["conservation"] as? [String: Any])
        #expect(conservation["holds"] as? Bool == true)
    }
}
