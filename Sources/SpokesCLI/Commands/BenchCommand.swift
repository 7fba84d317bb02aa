import Foundation
import SpokesBikes
import SpokesCluster

/// `spokes bench`: scheduling figures on local clusters of this machine.
enum BenchCommand {
    static let spec = CommandSpec(
        name: "bench",
        abstract: "Measure no-op throughput, remote round trips and slot-bound scaling on local clusters.",
        discussion: """
            Starts local clusters of 'spokes node' processes (like demo) and prints: bench.noop \
            tasks per second through the scheduler on 1 and 3 nodes; the round trip of one \
            remote no-op task, p50 and p99 of sequential calls; and the wall time of 200 \
            bench.sleep 0.1 s tasks with 4 slots per node on 1, 2 and 4 nodes, with the \
            efficiency against the ideal 200 x 0.1 / (4 x nodes). Use a release build. \
            With SPOKES_SECRET set, every cluster runs authenticated (tagged frames).
            """,
        options: [.flag("quick", help: "Smaller runs (about 20 s in all).")])

    static let subcommand = Subcommand(spec: spec) { arguments, context in
        let quick = arguments.flag("quick")
        if context.environment[ClusterSettings.secretVariable].map({ !$0.isEmpty }) == true {
            context.standardError("bench: clusters run with the secret from SPOKES_SECRET (authenticated frames)\n")
        }
        let noops = quick ? 2_000 : 20_000
        let roundTrips = quick ? 200 : 1_000
        var lines: [String] = []
        func say(_ line: String) {
            lines.append(line)
            context.standardError(line + "\n")
        }
        for nodes in [1, 3] {
            let report = try await batch(nodes: nodes, slots: 2, kind: NoopTask.name, input: "1", count: noops, context: context)
            say(String(format: "noop throughput, %d node(s) x 2 slots: %d tasks in %.2f s = %.0f tasks/s", nodes, noops, report.wallTime, Double(noops) / report.wallTime))
        }
        let latencies = try await roundTrip(count: roundTrips, context: context)
        say(String(format: "remote round trip, %d sequential no-ops: p50 %.3f ms, p99 %.3f ms", roundTrips, latencies.p50 * 1_000, latencies.p99 * 1_000))
        for nodes in [1, 2, 4] {
            let report = try await batch(nodes: nodes, slots: 4, kind: SleepTask.name, input: "0.1", count: 200, context: context)
            let ideal = 200 * 0.1 / Double(4 * nodes)
            say(String(format: "200 x sleep 0.1 s, %d node(s) x 4 slots: %.2f s (ideal %.2f s, efficiency %.1f%%)", nodes, report.wallTime, ideal, 100 * ideal / report.wallTime))
        }
        context.standardOutput(lines.joined(separator: "\n") + "\n")
        return 0
    }

    /// A fresh local cluster's settings, with the secret of `SPOKES_SECRET` if set (the
    /// nodes inherit the variable).
    static func settings(_ context: CommandContext) throws -> ClusterSettings {
        var settings = ClusterSettings()
        settings.cluster = "bench-\(String(UInt32.random(in: 0...UInt32.max), radix: 36))"
        settings.discoveryPort = UInt16.random(in: 40_000...49_999)
        try settings.loadSecret(environment: context.environment)
        return settings
    }

    static func batch(nodes: Int, slots: Int, kind: String, input: String, count: Int, context: CommandContext) async throws -> JobService.BatchReport {
        let settings = try settings(context)
        let cluster = try await LocalCluster.start(count: nodes, slots: slots, settings: settings, context: context)
        defer { cluster.stop() }
        return try await NodeClient.withClient(of: cluster.nodes[0].address, settings: settings, callTimeout: 600) { client, node in
            let service = try JobService.resolve(id: ActorID(node: node, name: JobService.wellKnownName), using: client)
            let report = try await service.runBatch(kind: kind, input: input, count: count, deadline: 60, retries: 0)
            guard report.succeeded == count else { throw BenchError.tasksFailed(report.tasks - report.succeeded) }
            return report
        }
    }

    /// Sequential no-op tasks from a client straight to one node's worker.
    static func roundTrip(count: Int, context: CommandContext) async throws -> (p50: Double, p99: Double) {
        let settings = try settings(context)
        let cluster = try await LocalCluster.start(count: 1, slots: 2, settings: settings, context: context)
        defer { cluster.stop() }
        return try await NodeClient.withClient(of: cluster.nodes[0].address, settings: settings, callTimeout: 30) { client, node in
            let worker = try ScanSystem.resolve(id: ActorID(node: node, name: ScanSystem.wellKnownName), using: client)
            let clock = ContinuousClock()
            var samples: [Double] = []
            for index in 0..<(count + 20) {
                let start = clock.now
                _ = try await worker.run(TaskRequest(job: "rtt", task: index, attempt: 1, kind: NoopTask.name, input: "1"))
                if index >= 20 { samples.append((clock.now - start).seconds) }
            }
            samples.sort()
            return (samples[samples.count / 2], samples[min(samples.count - 1, samples.count * 99 / 100)])
        }
    }
}

enum BenchError: Error, CustomStringConvertible {
    case tasksFailed(Int)
    var description: String {
        switch self {
        case .tasksFailed(let count): "\(count) benchmark tasks failed"
        }
    }
}
