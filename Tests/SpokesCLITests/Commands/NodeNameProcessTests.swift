import Foundation
import SpokesCluster
import SpokesConcurrency
import SpokesTestKit
import Testing
@testable import SpokesCLI
@testable import SpokesCluster

/// Node names over real processes: a node that takes a live member's name stops, and a
/// restarted node takes its own name back at once.
extension ClusterProcessTests {
    @Test func aNodeWithALiveMembersNameExitsOneNamingItAndTheMemberStays() async throws {
        let nodes = try await NodeProcess.start(2) { try await NodeProcess(name: "d\($0)", flags: flags) }
        try await waitUntil(nodes[0], "2 alive members") { $0.count == 2 && $0.allSatisfy { $0.state == "alive" } }
        let member = try #require(try await members(of: nodes[0]).first { $0.name == "d1" })

        let impostor = try await Self.runNode(["node", "--name", "d1"] + flags, within: 20)
        #expect(impostor.status == 1, "stderr: \(impostor.standardError)")
        #expect(impostor.standardError.contains("error: node name 'd1' is taken by a live member of the cluster at \(nodes[1].address)"),
                "\(impostor.standardError)")

        // The real d1 was never disturbed: the same incarnation, alive, on both nodes.
        let seen = try #require(try await members(of: nodes[0]).first { $0.name == "d1" })
        #expect(seen.incarnation == member.incarnation && seen.state == "alive")
        // On a loaded machine a heartbeat may come late enough for a moment's suspicion;
        // what matters is that d1 stays itself and sees d0 alive.
        try await waitUntil(nodes[1], "d1 and d0 alive on d1") { $0.map(\.state) == ["alive", "alive"] }

        // After it leaves, a node of that name is admitted at once, not after a fixed exclusion.
        nodes[1].kill(SIGTERM)
        #expect(await nodes[1].waitForExit() == 0)
        let restarted = try await NodeProcess(name: "d1", flags: flags)
        defer { restarted.kill(SIGTERM) }
        let admittedAfter = try await waitUntil(nodes[0], "the new d1 alive") {
            $0.contains { $0.name == "d1" && $0.state == "alive" && $0.incarnation != member.incarnation }
        }
        #expect(admittedAfter < 5, "admitted \(admittedAfter) s after it started")
        nodes[0].kill(SIGTERM)
    }

    /// Runs `spokes` with `arguments` as a child process until it exits, killing it (by
    /// its PID) after `seconds`; its exit status (nil if it had to be killed) and output.
    static func runNode(_ arguments: [String], within seconds: Double) async throws -> (status: Int32?, standardError: String) {
        let executable = try #require(SpokesExecutableTests.executable, "the spokes binary was not found beside the test bundle")
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let dataDirectory = try TemporaryDirectory()
        defer { dataDirectory.remove() }
        process.environment = ProcessInfo.processInfo.environment.merging(["SPOKES_DATA_DIRECTORY": dataDirectory.path]) { $1 }
        let err = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = err
        try ProcessLaunch.run(process)
        let pid = process.processIdentifier
        let watchdog = Task {
            try await Task.sleep(for: .clamped(seconds: seconds))
            kill(pid, SIGKILL)
        }
        let errors = await runBlocking("test.stderr") { Data(DescriptorReading.all(of: err.fileHandleForReading.fileDescriptor)) }
        await runBlocking("test.wait") { process.waitUntilExit() }
        watchdog.cancel()
        let killed = process.terminationReason == .uncaughtSignal
        return (killed ? nil : process.terminationStatus, String(decoding: errors, as: UTF8.self))
    }
}
