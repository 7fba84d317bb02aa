import Foundation
import Synchronization
import SpokesCluster
import SpokesConcurrency
import SpokesTestKit

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

    /// Where this node keeps its job records (never the user's ~/.spokes); removed once
    /// the node is gone.
    let dataDirectory: TemporaryDirectory
    /// Its stderr (the log), when the test asked for it.
    let log: FileHandle?

    /// Starts `spokes node --name NAME` with `flags` and waits (at most 20 s) for its
    /// ready line. With `readLog`, its stderr is a pipe the test reads (``log``).
    init(name: String, flags: [String], environment: [String: String] = [:], readLog: Bool = false) async throws {
        guard let executable = SpokesExecutableTests.executable else { throw CocoaError(.fileNoSuchFile) }
        self.name = name
        dataDirectory = try TemporaryDirectory()
        process = Process()
        process.executableURL = executable
        // A node stops on its own if the test process dies before it can stop it (a crash).
        process.arguments = ["node", "--name", name, "--stop-with-parent"] + flags
        process.environment = ProcessInfo.processInfo.environment.merging(["SPOKES_DATA_DIRECTORY": dataDirectory.path]) { $1 }
            .merging(environment) { $1 }
        let out = Pipe()
        process.standardOutput = out
        let err = readLog ? Pipe() : nil
        log = err?.fileHandleForReading
        process.standardError = err ?? FileHandle.nullDevice
        try ProcessLaunch.run(process)
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
        dataDirectory.remove()
    }
}
