import Foundation
import SpokesConcurrency
import Synchronization

extension NodesModel {
    /// Plays `seeds` one after another, printing each seed's verdict and trace hash as the
    /// other models do (`seed K: ok trace H`), and for a failing one what broke, its fault
    /// plan, the end of its trace and how to replay it; then a summary with seeds per
    /// minute and the ratio of virtual to real time (`showEveryTrace`: every seed's trace,
    /// to `report`). With `twice`, each seed is played a second time, and a seed whose
    /// second run's trace hash differs from its first fails: the run is not determined
    /// by its seed. Returns the seeds that failed.
    public static func playAll(
        seeds: ClosedRange<UInt64>, options: Options, traceLines: Int = 80, showEveryTrace: Bool = false, twice: Bool = false,
        print output: @escaping @Sendable (String) -> Void, report: @escaping @Sendable (String) -> Void
    ) async -> [UInt64] {
        var failures: [UInt64] = []
        var virtual = 0.0, wall = 0.0
        for seed in seeds {
            var verdict = await play(seed: seed, options: options)
            virtual += verdict.virtualSeconds
            wall += verdict.wallSeconds
            output("seed \(seed): \(verdict.failed ? "FAIL" : "ok") trace \(String(verdict.traceHash, radix: 16)) order \(String(verdict.orderHash, radix: 16)) (\(verdict.trace.count) events, \(verdict.jobsRun) jobs, \(String(format: "%.0f", verdict.virtualSeconds)) virtual s in \(String(format: "%.1f", verdict.wallSeconds)) s)")
            if twice {
                let again = await play(seed: seed, options: options)
                virtual += again.virtualSeconds
                wall += again.wallSeconds
                if again.traceHash != verdict.traceHash, verdict.violation == nil {
                    verdict.violation = "the seed's second run differs from its first: trace \(String(again.traceHash, radix: 16)), \(again.trace.count) events, \(again.jobsRun) jobs"
                    let first = verdict.trace, second = again.trace
                    if let split = (0..<min(first.count, second.count)).first(where: { first[$0] != second[$0] }) ?? (first.count != second.count ? min(first.count, second.count) : nil) {
                        verdict.violation! += "; the traces part at event \(split + 1): first \"\(split < first.count ? first[split] : "(end)")\", then \"\(split < second.count ? second[split] : "(end)")\""
                    }
                }
            }
            if verdict.violation == nil, showEveryTrace {
                report(verdict.trace.map { "  " + $0 }.joined(separator: "\n"))
            }
            if let violation = verdict.violation {
                failures.append(seed)
                var text = "seed \(seed): \(violation)\nfaults (\(verdict.faults.count)):\n"
                for fault in verdict.faults { text += "  \(fault)\n" }
                let shown = verdict.trace.suffix(traceLines)
                text += "trace (\(verdict.trace.count) events\(shown.count < verdict.trace.count ? ", the last \(shown.count)" : "")):\n"
                for line in shown { text += "  \(line)\n" }
                text += "replay: Scripts/simulate-cluster --model nodes --nodes \(options.nodes) --seeds \(seed)"
                report(text)
            }
        }
        output(String(format: "nodes: %d nodes, %d seeds, %d failed; %.0f virtual s in %.1f s wall (%.0fx real time, %.1f seeds per minute)",
                      options.nodes, seeds.count, failures.count, virtual, wall, virtual / max(wall, 1e-9), Double(seeds.count) * 60 / max(wall, 1e-9)))
        return failures
    }

    /// ``playAll(seeds:options:traceLines:showEveryTrace:twice:print:report:)`` from synchronous code (the
    /// simulator's `main`), every task of the process on the caller's thread, one job at a
    /// time (``SimulationExecutor``): the driver knows when the nodes are quiet, and a
    /// seed plays the same way every time.
    public static func playAllBlocking(
        seeds: ClosedRange<UInt64>, options: Options, traceLines: Int = 80, showEveryTrace: Bool = false, twice: Bool = false,
        print output: @escaping @Sendable (String) -> Void, report: @escaping @Sendable (String) -> Void
    ) -> [UInt64] {
        SimulationExecutor.run {
            await playAll(seeds: seeds, options: options, traceLines: traceLines, showEveryTrace: showEveryTrace, twice: twice, print: output, report: report)
        }
    }
}
