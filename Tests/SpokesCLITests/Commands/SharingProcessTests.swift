import Foundation
import SpokesTestKit
import Testing
@testable import SpokesCLI

/// Issue 32 with real `spokes node` processes: a short map submitted behind a long one.
extension ClusterProcessTests {
    @Test func aShortMapBehindALongOneIsNotStuckBehindIt() async throws {
        let nodes = try await NodeProcess.start(2) { try await NodeProcess(name: "f\($0)", flags: flags + ["--slots", "2"]) }
        defer { nodes.forEach { $0.kill(SIGKILL) } }
        try await waitUntil(nodes[0], "2 alive members") { $0.count == 2 && $0.allSatisfy { $0.state == "alive" } }
        let folder = try TemporaryDirectory()
        let short = try folder.write(String(repeating: "0.2\n", count: 20), to: "short.jsonl")
        let long = try folder.write(String(repeating: "0.2\n", count: 300), to: "long.jsonl")
        let first = nodes[0].address.description, second = nodes[1].address.description
        let clock = ContinuousClock()
        // Alone: 20 tasks of 0.2 s on 4 slots.
        var start = clock.now
        let alone = await CommandRun.spokes(["map", "bench.sleep", "--to", second, "--inputs", short, "--owner", "bob"])
        let aloneSeconds = (clock.now - start).seconds
        #expect(alone.status == 0, "\(alone.standardError)")
        // Ada's long map (15 s on 4 slots), coordinated by f0.
        let longMap = Task { await CommandRun.spokes(["map", "bench.sleep", "--to", first, "--inputs", long, "--owner", "ada", "--deadline", "60"]) }
        let job = try await runningJob(at: first, done: 8, within: 15, "ada's long map") { job in
            (job["slots"] as? [String: Any]).flatMap { $0["share"] as? [String: Any] }?["owner"] as? String == "ada"
        }
        // Bob's short map, coordinated by f1, while every slot is ada's.
        start = clock.now
        let behind = await CommandRun.spokes(["map", "bench.sleep", "--to", second, "--inputs", short, "--owner", "bob"])
        let behindSeconds = (clock.now - start).seconds
        let cancelled = await CommandRun.spokes(["cancel", job, "--to", first])
        _ = await longMap.value
        #expect(behind.status == 0, "\(behind.standardError)")
        #expect(behind.standardOutput == String(repeating: "0.2\n", count: 20))
        #expect(cancelled.status == 0, "\(cancelled.standardError)")
        // Half the slots (2.2 s in virtual time) and slack for a loaded machine; stuck
        // behind the long map it would take most of its 15 s.
        #expect(behindSeconds <= 3 * aloneSeconds + 1, "alone \(aloneSeconds) s, behind ada's map \(behindSeconds) s")
    }
}
