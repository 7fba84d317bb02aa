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
    /// by its seed. `scenario` names the options in the replay line (`--scenario`). Returns
    /// the seeds that failed.
    public static func playAll(
        seeds: ClosedRange<UInt64>, options: Options, scenario: String? = nil, traceLines: Int = 80, showEveryTrace: Bool = false, twice: Bool = false,
        print output: @escaping @Sendable (String) -> Void, report: @escaping @Sendable (String) -> Void
    ) async -> [UInt64] {
        var failures: [UInt64] = []
        var virtual = 0.0, wall = 0.0
        var safetyChecks = 0, safetySeconds = 0.0
        for seed in seeds {
            var verdict = await play(seed: seed, options: options)
            virtual += verdict.virtualSeconds
            wall += verdict.wallSeconds
            safetyChecks += verdict.safetyChecks
            safetySeconds += verdict.safetySeconds
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
                // The smallest plan that still fails, when the run is the seed's own (a
                // run that differed from itself is shown as it is).
                var shown = verdict
                var shrunkOptions = options
                if !twice || !violation.hasPrefix("the seed's second run differs") {
                    (shown, shrunkOptions) = await shrink(verdict, options: options)
                    virtual += shown.virtualSeconds
                    if shown.faults.count < verdict.faults.count {
                        text += "shrunk to \(shown.faults.count) fault(s), still failing: \(shown.violation ?? "")\n"
                        for fault in shown.faults { text += "  \(fault)\n" }
                    }
                }
                let lines = shown.trace.suffix(traceLines)
                text += "trace (\(shown.trace.count) events\(lines.count < shown.trace.count ? ", the last \(lines.count)" : "")):\n"
                for line in lines { text += "  \(line)\n" }
                let drop = shrunkOptions.droppedFaults.sorted().map(String.init).joined(separator: ",")
                let kinds = options.faultKinds == Fault.Kind.allCases ? "" : " --faults \(options.faultKinds.map(\.rawValue).joined(separator: ","))"
                text += "replay: Scripts/simulate-cluster --model nodes --nodes \(options.nodes) --seeds \(seed)\(scenario.map { " --scenario \($0)" } ?? "")\(kinds)\(drop.isEmpty ? "" : " --drop \(drop)")"
                report(text)
            }
        }
        output(String(format: "nodes: safety invariants checked after every event %d times, %.1f s of the wall time (%.0f%%)",
                      safetyChecks, safetySeconds, 100 * safetySeconds / max(wall, 1e-9)))
        output(String(format: "nodes: %d nodes, %d seeds, %d failed; %.0f virtual s in %.1f s wall (%.0fx real time, %.1f seeds per minute)",
                      options.nodes, seeds.count, failures.count, virtual, wall, virtual / max(wall, 1e-9), Double(seeds.count) * 60 / max(wall, 1e-9)))
        return failures
    }

    /// A failing seed's run with as few of its faults as still fail (any invariant), and
    /// the options that replay it: each fault in turn is left out (``Options/droppedFaults``)
    /// and stays out if the seed still fails without it. Runs replay (one thread), so the
    /// shrunk plan fails every time it is played.
    static func shrink(_ failing: Verdict, options: Options) async -> (Verdict, Options) {
        var best = failing
        var bestOptions = options
        let planned = plan(seed: failing.seed, options: options).count
        for index in 0..<planned where !bestOptions.droppedFaults.contains(index) {
            var trial = bestOptions
            trial.droppedFaults.insert(index)
            let verdict = await play(seed: failing.seed, options: trial)
            if verdict.failed {
                best = verdict
                bestOptions = trial
            }
        }
        return (best, bestOptions)
    }

    /// ``playAll(seeds:options:scenario:traceLines:showEveryTrace:twice:print:report:)`` from synchronous code (the
    /// simulator's `main`), every task of the process on the caller's thread, one job at a
    /// time (``SimulationExecutor``): the driver knows when the nodes are quiet, and a
    /// seed plays the same way every time.
    public static func playAllBlocking(
        seeds: ClosedRange<UInt64>, options: Options, scenario: String? = nil, traceLines: Int = 80, showEveryTrace: Bool = false, twice: Bool = false,
        print output: @escaping @Sendable (String) -> Void, report: @escaping @Sendable (String) -> Void
    ) -> [UInt64] {
        SimulationExecutor.run {
            await playAll(seeds: seeds, options: options, scenario: scenario, traceLines: traceLines, showEveryTrace: showEveryTrace, twice: twice, print: output, report: report)
        }
    }
}
