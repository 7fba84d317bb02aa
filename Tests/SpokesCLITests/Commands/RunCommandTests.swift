import Foundation
import SpokesCluster
import SpokesConcurrency
import SpokesTestKit
import Synchronization
import Testing
@testable import SpokesCLI

/// `test.square`: an app's own kind. Squares numbers from 0 to 1,000; refuses negative
/// ones in validation; throws for larger ones.
struct SquareKind: TaskKind {
    static let name = "test.square"
    struct Input: Codable, Sendable { var number: Int }
    enum SquareError: Error, CustomStringConvertible {
        case negative(Int)
        case tooLarge(Int)
        var description: String {
            switch self {
            case .negative(let number): "number must be 0 or more, got \(number)"
            case .tooLarge(let number): "number must be at most 1000, got \(number)"
            }
        }
    }
    func validate(_ input: Input) throws {
        if input.number < 0 { throw SquareError.negative(input.number) }
    }
    func run(_ input: Input, context: TaskContext) async throws -> Int {
        guard input.number <= 1_000 else { throw SquareError.tooLarge(input.number) }
        return input.number * input.number
    }
}

/// `spokes node` run in this process by `SpokesTool.main(_:context:kinds:)`, as an app's
/// executable runs it; stopped with `spokes stop`.
final class InProcessNode: Sendable {
    let address: String
    private let running: Task<Int32, Never>

    /// Starts the node and waits (at most 20 s) for its ready line.
    init(name: String, cluster: String, discoveryPort: UInt16, dataDirectory: String, kinds: [any TaskKind]) async throws {
        let ready = Promise<String, Never>()
        let context = CommandContext(
            standardOutput: { text in
                if let field = text.split(separator: " ").first(where: { $0.hasPrefix("address=") }) {
                    ready.resolve(String(field.dropFirst("address=".count)).trimmingCharacters(in: .whitespacesAndNewlines))
                }
            },
            standardError: { _ in }, standardErrorIsTerminal: false)
        running = Task {
            await SpokesTool.main(
                ["node", "--name", name, "--cluster", cluster, "--discovery-port", "\(discoveryPort)", "--data-directory", dataDirectory],
                context: context, kinds: kinds)
        }
        do {
            address = try await withTimeout(seconds: 20) { await ready.future.value }
        } catch {
            running.cancel()
            throw error
        }
    }

    /// Asks the node to stop and waits for it to return its status.
    func stop() async -> Int32 {
        _ = await CommandRun.spokes(["stop", "--to", address])
        return await running.value
    }
}

@Suite(.processLane, .timeLimit(.minutes(2)))
struct RunCommandTests {
    let folder: TemporaryDirectory

    init() throws {
        folder = try TemporaryDirectory()
    }

    /// Two in-process nodes of an app that registers ``SquareKind``, converged.
    func startNodes() async throws -> [InProcessNode] {
        let cluster = "run-\(UUID().uuidString.prefix(8))"
        let port = TestPorts.discovery()
        var nodes: [InProcessNode] = []
        for index in 0..<2 {
            nodes.append(try await InProcessNode(
                name: "r\(index)", cluster: cluster, discoveryPort: port, dataDirectory: folder.file("node-\(index)"), kinds: [SquareKind()]))
        }
        let first = nodes[0].address
        let converged = try? await withTimeout(seconds: 10) {
            while true {
                let status = await CommandRun.spokes("status", "--to", first, "--json")
                if let total = try? status.json()["total"] as? [String: Any], total["alive"] as? Int == 2 { return true }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        if converged != true {
            for node in nodes { _ = await node.stop() }
            Issue.record("the two nodes did not see each other within 10 s")
            throw TimeoutError(seconds: 10)
        }
        return nodes
    }

    @Test func anAppsKindRunsOnTheNodesItStartsAndOutputsComeInInputOrder() async throws {
        let nodes = try await startNodes()
        let inputs = try folder.write((0..<20).map { "{\"number\": \($0)}" }.joined(separator: "\n") + "\n\n", to: "inputs.jsonl")
        let run = await CommandRun.spokes(["run", "test.square", "--to", nodes[0].address, "--inputs", inputs], kinds: [SquareKind()])
        for node in nodes { #expect(await node.stop() == 0) }
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput == (0..<20).map { "\($0 * $0)\n" }.joined())
        #expect(run.standardError.contains("20 of 20 tasks of test.square succeeded"), "\(run.standardError)")
    }

    @Test func mapWithUnorderedPrintsEachOutputAsItEndsWithItsInputsLineNumber() async throws {
        let nodes = try await startNodes()
        let inputs = try folder.write("{\"number\": 2}\n\n{\"number\": 5000}\n{\"number\": 3}\n", to: "inputs.jsonl")
        let map = await CommandRun.spokes(["map", "test.square", "--to", nodes[0].address, "--inputs", inputs, "--unordered", "--retries", "0"])
        let json = await CommandRun.spokes(["map", "test.square", "--to", nodes[0].address, "--inputs", inputs, "--json", "--retries", "0"])
        for node in nodes { #expect(await node.stop() == 0) }
        #expect(map.status == 1, "one task fails: \(map.standardError)")
        let lines = map.standardOutput.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(lines.count == 3)
        let byLine = Dictionary(uniqueKeysWithValues: lines.map { ($0["line"] as? Int ?? 0, $0) })
        #expect(byLine[1]?["output"] as? Int == 4 && byLine[4]?["output"] as? Int == 9)
        #expect((byLine[3]?["error"] as? String)?.contains("number must be at most 1000") == true, "\(byLine[3] ?? [:])")
        #expect(["r0", "r1"].contains(byLine[1]?["node"] as? String ?? ""))
        // --json in input order: lines 1, 3, 4.
        let ordered = json.standardOutput.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(ordered.compactMap { $0["line"] as? Int } == [1, 3, 4])
    }

    /// The running and stored jobs a node lists, by id (`spokes jobs --json`).
    func jobs(at address: String) async throws -> [String: [String: Any]] {
        let list = try await CommandRun.spokes("jobs", "--to", address, "--json").json()
        let jobs = try #require(list["jobs"] as? [[String: Any]])
        return Dictionary(jobs.map { ($0["job"] as? String ?? "", $0) }, uniquingKeysWith: { _, last in last })
    }

    @Test func aMapIsAJobTheClusterKeepsListedAndPrintedAgainFromTheNodeOrItsDataDirectory() async throws {
        let nodes = try await startNodes()
        let inputs = try folder.write("{\"number\": 2}\n{\"number\": 5000}\n{\"number\": 3}\n", to: "inputs.jsonl")
        let map = await CommandRun.spokes(["map", "test.square", "--to", nodes[0].address, "--inputs", inputs, "--retries", "0"], kinds: [SquareKind()])
        let job = try #require(map.standardError.firstMatch(of: /job (map-[0-9a-f]{8}) accepted by r0/).map { String($0.1) }, "\(map.standardError)")
        let listed = try await jobs(at: nodes[0].address)[job]
        let again = await CommandRun.spokes(["result", job, "--to", nodes[0].address])
        let elsewhere = await CommandRun.spokes(["result", job, "--to", nodes[1].address])
        for node in nodes { #expect(await node.stop() == 0) }
        let fromFolder = await CommandRun.spokes(["result", job, "--data-directory", folder.file("node-0"), "--json"])
        #expect(map.status == 1 && map.standardOutput == "4\nnull\n9\n", "\(map.standardError)")
        #expect(listed?["state"] as? String == "failed" && listed?["kind"] as? String == "test.square", "\(listed ?? [:])")
        #expect(listed?["users"] as? Int == 3 && listed?["completedUsers"] as? Int == 2 && listed?["failedUsers"] as? Int == 1)
        #expect(again.status == 1 && again.standardOutput == map.standardOutput, "\(again.standardError)")
        #expect(again.standardError.contains("2 of 3 tasks of test.square succeeded"), "\(again.standardError)")
        #expect(elsewhere.status == 1 && elsewhere.standardOutput == map.standardOutput, "any node finds it: \(elsewhere.standardError)")
        let lines = fromFolder.standardOutput.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(lines.map { $0["output"] as? Int } == [4, nil, 9], "\(fromFolder.standardOutput)")
    }

    @Test func anyNodeListsTheClustersJobsAndResultWaitsForARunningOne() async throws {
        let nodes = try await startNodes()
        let inputs = try folder.write("0.6\n0.6\n", to: "inputs.jsonl")
        let map = Task { await CommandRun.spokes(["map", "bench.sleep", "--to", nodes[0].address, "--inputs", inputs]) }
        var job = ""
        try await eventually("r1 lists the map r0 runs") {
            job = try await jobs(at: nodes[1].address).first { $0.value["kind"] as? String == "bench.sleep" && $0.value["state"] as? String == "running" }?.key ?? ""
            return !job.isEmpty
        }
        let early = await CommandRun.spokes(["result", job, "--to", nodes[1].address])
        let waited = await CommandRun.spokes(["result", job, "--to", nodes[1].address, "--wait"])
        let ended = await map.value
        let unknown = await CommandRun.spokes(["result", "map-00000000", "--to", nodes[1].address])
        for node in nodes { #expect(await node.stop() == 0) }
        #expect(early.status == 1 && early.standardError.contains("job \(job) is running on r0"), "\(early.standardError)")
        #expect(ended.status == 0 && waited.status == 0, "\(waited.standardError)")
        #expect(waited.standardOutput == "0.6\n0.6\n" && waited.standardOutput == ended.standardOutput)
        #expect(unknown.status == 1 && unknown.standardError.contains("no node of the cluster knows job map-00000000"), "\(unknown.standardError)")
    }

    @Test func aMapCancelledFromAnyNodeStopsItsTasksAndIsStoredAsCancelled() async throws {
        let nodes = try await startNodes()
        let inputs = try folder.write(String(repeating: "30\n", count: 6), to: "inputs.jsonl")
        let map = Task { await CommandRun.spokes(["map", "bench.sleep", "--to", nodes[0].address, "--inputs", inputs, "--deadline", "60"]) }
        var job = ""
        try await eventually("the map is listed as running on r0") {
            job = try await jobs(at: nodes[0].address).first { $0.value["kind"] as? String == "bench.sleep" }?.key ?? ""
            return !job.isEmpty
        }
        // Asked of r1, which passes it to r0.
        let cancel = await CommandRun.spokes(["cancel", job, "--to", nodes[1].address])
        let ended = await map.value
        let stored = try await jobs(at: nodes[0].address)[job]
        for node in nodes { #expect(await node.stop() == 0) }
        #expect(cancel.status == 0 && cancel.standardOutput.contains("cancelled job \(job) on r0"), "\(cancel.standardOutput)\(cancel.standardError)")
        #expect(cancel.standardOutput.contains("0 of 6 tasks completed, 6 cancelled"), "\(cancel.standardOutput)")
        #expect(ended.status == 130, "\(ended.standardError)")
        #expect(stored?["state"] as? String == "cancelled", "\(stored ?? [:])")
    }

    @Test func mapListNamesEveryKindWithItsVersionAndTheNodesThatRunIt() async throws {
        let nodes = try await startNodes()
        let list = await CommandRun.spokes(["map", "--list", "--to", nodes[0].address])
        for node in nodes { #expect(await node.stop() == 0) }
        #expect(list.status == 0, "\(list.standardError)")
        let rows = list.standardOutput.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
        #expect(rows.first == ["KIND", "VERSION", "SCHEMA", "NODES"])
        #expect(rows.contains { $0.first == "test.square" && $0[1] == "1" && $0.suffix(2) == ["r0,", "r1"] }, "\(list.standardOutput)")
        #expect(rows.contains { $0.first == "bikes.user" }, "the built-in kinds are listed too")
    }

    @Test func aKindsErrorIsListedWithItsLineTypeAndMessageAndTheRestSucceed() async throws {
        let nodes = try await startNodes()
        let inputs = try folder.write("{\"number\": 2}\n\n{\"number\": 5000}\n{\"number\": 3}\n", to: "inputs.jsonl")
        // A client that does not run the kind itself: the error comes from the workers.
        let run = await CommandRun.spokes(["run", "test.square", "--to", nodes[0].address, "--inputs", inputs, "--retries", "1"])
        for node in nodes { #expect(await node.stop() == 0) }
        #expect(run.status == 1)
        #expect(run.standardOutput == "4\nnull\n9\n")
        #expect(run.standardError.contains("task 1 (line 3, input {\"number\": 5000}) failed: attempt 1 on r"), "\(run.standardError)")
        #expect(run.standardError.contains(": SquareError.tooLarge: number must be at most 1000, got 5000; attempt 2 on r"), "\(run.standardError)")
        #expect(!run.standardError.contains("threw TaskError"), "the transport's wrapping is not shown")
    }

    @Test func aKindNoMemberRunsIsNamedWithTheMembersAsked() async throws {
        let nodes = try await startNodes()
        let inputs = try folder.write("1\n", to: "inputs.jsonl")
        let run = await CommandRun.spokes(["run", "no.such-kind", "--to", nodes[0].address, "--inputs", inputs, "--retries", "0"])
        for node in nodes { #expect(await node.stop() == 0) }
        #expect(run.status == 1)
        #expect(run.standardError.contains("no alive node runs task kind 'no.such-kind' (asked r0, r1)"), "\(run.standardError)")
        #expect(run.standardOutput.isEmpty, "nothing ran")
    }

    @Test(arguments: [
        ("{\"number\": 1}\n{\"number\": \"two\"}\n", "inputs.jsonl:2: invalid input for test.square: expected Int at number"),
        ("{\"number\": 1}\n\n{\"number\": -4}\n", "inputs.jsonl:3: invalid input for test.square: SquareError.negative: number must be 0 or more, got -4"),
        ("{\"number\": 1\n", "inputs.jsonl:1: not valid JSON"),
        ("\n\n", "inputs.jsonl holds no inputs"),
    ])
    func aBadInputLineIsNamedBeforeAnythingRuns(text: String, message: String) async throws {
        let inputs = try folder.write(text, to: "inputs.jsonl")
        // No node listens at --to: the inputs are refused before any connection.
        let run = await CommandRun.spokes(["run", "test.square", "--to", "127.0.0.1:1", "--inputs", inputs], kinds: [SquareKind()])
        #expect(run.status == 1)
        #expect(run.standardError.contains(message), "\(run.standardError)")
        #expect(run.standardOutput.isEmpty)
    }

    @Test func anInputOverTheSizeLimitIsNamedWithItsLine() async throws {
        let inputs = try folder.write("1\n\"\(String(repeating: "x", count: 800))\"\n", to: "inputs.jsonl")
        let run = await CommandRun.spokes(["run", "bench.noop", "--to", "127.0.0.1:1", "--inputs", inputs],
                                          environment: ["SPOKES_LIMITS_MAX_FRAME_BYTES": "4096"])
        #expect(run.status == 1)
        #expect(run.standardError.contains("inputs.jsonl:2: the input of bench.noop is 802 bytes of JSON; a task's input may be at most 768"), "\(run.standardError)")
    }

    @Test func runWithoutAKindIsAUsageError() async {
        let run = await CommandRun.spokes("run")
        #expect(run.status == 2)
        #expect(run.standardError.contains("name the task kind to run"))
    }

    @Test func theToolSaysWhichKindsItsBuildAddsAndRefusesAKindNamedLikeABuiltInOne() async {
        let help = await CommandRun.spokes(["--help"], kinds: [SquareKind()])
        #expect(help.standardOutput.contains("This build also runs: test.square."))
        let clash = await CommandRun.spokes(["status"], kinds: [NoopTask()])
        #expect(clash.status == 1)
        #expect(clash.standardError.contains("two task kinds are named 'bench.noop'"), "\(clash.standardError)")
    }
}
