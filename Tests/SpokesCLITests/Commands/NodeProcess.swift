import Foundation
import Synchronization
import SpokesCluster
import SpokesConcurrency
import SpokesTestKit
@testable import SpokesCLI
import SpokesNode

/// A `spokes node` child process for a test: started, waited for until its ready line,
/// and always stopped by its PID.
final class NodeProcess: Sendable {
    let name: String
    let address: SocketAddress
    /// The `dashboard=` address of its ready line, when it serves one.
    let dashboard: String?
    private let process: ChildProcess
    /// The read end of its stdout, open while it lives (a closed one would fail its writes).
    private let output: FileHandle

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
        // A node stops on its own if the test process dies before it can stop it (a crash).
        let arguments = ["node", "--name", name, "--stop-with-parent"] + flags
        let environment = ProcessInfo.processInfo.environment.merging(["SPOKES_DATA_DIRECTORY": dataDirectory.path]) { $1 }
            .merging(environment) { $1 }
        let out = try ChildProcess.pipe()
        let err = readLog ? try ChildProcess.pipe() : nil
        log = err.map { FileHandle(fileDescriptor: $0.read, closeOnDealloc: true) }
        output = FileHandle(fileDescriptor: out.read, closeOnDealloc: true)
        do {
            process = try ChildProcess(executable: executable.path, arguments: arguments, environment: environment,
                                       standardOutput: out.write, standardError: err?.write)
        } catch {
            close(out.write)
            if let err { close(err.write) }
            throw error
        }
        // The child has its own copies: the read ends see the end once it exits.
        close(out.write)
        if let err { close(err.write) }
        // A node that never becomes ready is killed, which ends the read below.
        let ready = Atomic<Bool>(false)
        let pid = process.pid
        DispatchQueue.global().asyncAfter(deadline: .now() + 20) {
            if !ready.load(ordering: .acquiring) { Glibc.kill(pid, SIGKILL) }
        }
        defer { ready.store(true, ordering: .releasing) }
        let text = await readOutput(of: output, until: "\n")
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

    var pid: Int32 { process.pid }

    /// Where it keeps its Raft groups (under its own folder of its data directory).
    var raftDirectory: String { NodeDirectory.path(of: name, in: dataDirectory.path) + "/raft" }

    func kill(_ signal: Int32) {
        process.kill(signal)
    }

    /// Waits (at most 10 s) for the process to exit and returns its status.
    func waitForExit() async -> Int32? {
        await process.waitForExit(within: 10)
    }

    deinit {
        process.kill(SIGKILL)
        dataDirectory.remove()
    }
}
