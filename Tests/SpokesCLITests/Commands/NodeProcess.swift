import Foundation
import Synchronization
import SpokesCluster
import SpokesConcurrency

/// A `spokes node` child process for a test: started, waited for until its ready line,
/// and always stopped by its PID.
final class NodeProcess: @unchecked Sendable {
    // Sendable: `process` is set once in init and only read afterwards; Process itself
    // is thread-safe for the calls used (terminate, isRunning, processIdentifier).
    let name: String
    let address: SocketAddress
    /// The `dashboard=` address of its ready line, when it serves one.
    let dashboard: String?
    private let process: Process

    /// Starts `spokes node --name NAME` with `flags` and waits (at most 20 s) for its ready line.
    /// Where test nodes keep job records: never the user's ~/.spokes.
    static let dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("spokes-test-data-\(getpid())").path

    init(name: String, flags: [String], environment: [String: String] = [:]) async throws {
        guard let executable = SpokesExecutableTests.executable else { throw CocoaError(.fileNoSuchFile) }
        self.name = name
        process = Process()
        process.executableURL = executable
        process.arguments = ["node", "--name", name] + flags
        process.environment = ProcessInfo.processInfo.environment.merging(["SPOKES_DATA_DIRECTORY": Self.dataDirectory]) { $1 }
            .merging(environment) { $1 }
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        // A node that never becomes ready is killed, which ends the read below.
        let ready = Atomic<Bool>(false)
        let pid = process.processIdentifier
        DispatchQueue.global().asyncAfter(deadline: .now() + 20) {
            if !ready.load(ordering: .acquiring) { Glibc.kill(pid, SIGKILL) }
        }
        defer { ready.store(true, ordering: .releasing) }
        let text = await readOutput(of: out.fileHandleForReading, until: "\n")
        guard text.contains("\n") else { throw CocoaError(.fileReadUnknown, userInfo: [NSDebugDescriptionErrorKey: "\(name) exited before it was ready"]) }
        guard let line = text.split(separator: "\n").first, line.hasPrefix("ready "),
              let field = line.split(separator: " ").first(where: { $0.hasPrefix("address=") }) else {
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSDebugDescriptionErrorKey: "unexpected first line: \(text)"])
        }
        address = try SocketAddress(parsing: String(field.dropFirst("address=".count)))
        dashboard = line.split(separator: " ").first { $0.hasPrefix("dashboard=") }.map { String($0.dropFirst("dashboard=".count)) }
    }

    /// `count` nodes made by `make`, one after the other.
    static func start(_ count: Int, _ make: (Int) async throws -> NodeProcess) async throws -> [NodeProcess] {
        var nodes: [NodeProcess] = []
        for index in 0..<count { nodes.append(try await make(index)) }
        return nodes
    }

    var pid: Int32 { process.processIdentifier }

    func kill(_ signal: Int32) {
        if process.isRunning { Glibc.kill(process.processIdentifier, signal) }
    }

    /// Waits (at most 10 s) for the process to exit and returns its status.
    func waitForExit() async -> Int32? {
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning, Date() < deadline { try? await Task.sleep(for: .milliseconds(10)) }
        return process.isRunning ? nil : process.terminationStatus
    }

    deinit {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
    }
}
