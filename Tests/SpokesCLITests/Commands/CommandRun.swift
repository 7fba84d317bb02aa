import Foundation
import SpokesCluster
import SpokesConcurrency
import Synchronization
import SpokesTestKit
@testable import SpokesCLI

/// What one in-process run of the `spokes` tool printed and returned.
struct CommandRun: Sendable {
    var status: Int32
    var standardOutput: String
    var standardError: String

    /// Runs `spokes` with `arguments` in this process, capturing its output.
    static func spokes(_ arguments: String...) async -> CommandRun {
        await spokes(arguments)
    }

    /// Runs `spokes` with `arguments` in this process, capturing its output; `environment`
    /// is added to the process's for this run only; its nodes also run `kinds`.
    static func spokes(_ arguments: [String], environment: [String: String] = [:], kinds: [any TaskKind] = []) async -> CommandRun {
        let output = Mutex(("", ""))
        let context = CommandContext(
            standardOutput: { text in output.withLock { $0.0 += text } },
            standardError: { text in output.withLock { $0.1 += text } },
            standardErrorIsTerminal: false,
            environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
        let status = await SpokesTool.main(arguments, context: context, kinds: kinds)
        let (out, err) = output.withLock { $0 }
        return CommandRun(status: status, standardOutput: out, standardError: err)
    }

    /// The JSON object printed on stdout.
    func json() throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(standardOutput.utf8))
        guard let dictionary = object as? [String: Any] else { throw CocoaError(.coderReadCorrupt) }
        return dictionary
    }
}

/// What a child process writes to `handle` until the text contains `marker` or the pipe
/// ends, read on a thread of its own (never the cooperative pool).
func readOutput(of handle: FileHandle, until marker: String) async -> String {
    await runBlocking("test.read-output") {
        var text = ""
        while !text.contains(marker) {
            let chunk = DescriptorReading.chunk(of: handle.fileDescriptor)
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        return text
    }
}

/// The id of the first running job `spokes jobs --json` lists at `address` (with `flags`)
/// that `matches`, once at least `done` of its users or tasks ended; waits at most
/// `seconds`, asking every 50 ms.
func runningJob(
    at address: String, flags: [String] = [], done: Int, within seconds: Double, _ what: String,
    matches: @escaping @Sendable ([String: Any]) -> Bool
) async throws -> String {
    var job = ""
    try await eventually("the node at \(address) runs \(what) with \(done) or more ended", within: seconds, every: .milliseconds(50)) {
        let listed = await CommandRun.spokes(["jobs", "--to", address, "--json"] + flags)
        let jobs = (try? listed.json()["jobs"] as? [[String: Any]]) ?? []
        guard let running = jobs.first(where: { $0["state"] as? String == "running" && matches($0) }),
              running["completedUsers"] as? Int ?? 0 >= done else { return false }
        job = running["job"] as? String ?? ""
        return !job.isEmpty
    }
    return job
}
