import Foundation
import SpokesConcurrency
import Testing
@testable import SpokesSimulation

/// A coordinator placing a job on workers in the simulator: the real `Placement`,
/// `WorkerAdmission` and `Membership` under seeded faults on the workers.
@Suite struct SchedulingSimulationTests {
    static func model(forgets: Bool = false) -> SchedulingModel {
        var options = SchedulingModel.Options()
        options.forgetsInFlightWhenAliveAgain = forgets
        return SchedulingModel(options: options)
    }

    static func options(_ seed: UInt64, kinds: [SimulationFault.Kind] = SimulationFault.Kind.allCases) -> SimulationOptions {
        SimulationOptions(seed: seed, faultWindow: 8, faultKinds: kinds, settle: 12)
    }

    /// Plays `seeds`; the shrunk report of each failing seed, and a summary line.
    static func sweep(seeds: ClosedRange<UInt64>, forgets: Bool = false, kinds: [SimulationFault.Kind] = SimulationFault.Kind.allCases)
        -> (failures: [(UInt64, String)], line: String) {
        var failures: [(UInt64, String)] = []
        let start = Date()
        var virtual = 0.0, most = 0
        for seed in seeds {
            let (result, model) = Simulation.play(model(forgets: forgets), options: options(seed, kinds: kinds))
            virtual += result.virtualSeconds
            most = max(most, model.mostOutOnOneNode)
            if result.failed {
                let shrunk = Simulation.shrink(result, model: { Self.model(forgets: forgets) }, options: options(seed, kinds: kinds))
                failures.append((seed, Simulation<SchedulingModel>.report(shrunk, lines: 60)))
            }
        }
        let wall = Date().timeIntervalSince(start)
        return (failures, "scheduling: \(seeds.count) seeds in \(fixed(wall, 2)) s, \(fixed(virtual / wall, 0))x real time, at most \(most) attempts out on one node")
    }

    @Test func placementNeverOvercommitsAWorkerAndEveryTaskEndsOnceUnderSeededFaults() async {
        let (failures, line) = await runBlocking("simulation") { Self.sweep(seeds: 1...25) }
        print(line)
        #expect(failures.isEmpty, "\(failures.count) seeds failed; seed \(failures.first?.0 ?? 0), shrunk:\n\(failures.first?.1 ?? "")")
    }

    @Test func aSeedReplaysTheSameRun() {
        let first = Simulation.run(Self.model(), options: Self.options(5))
        let again = Simulation.run(Self.model(), options: Self.options(5))
        #expect(first.traceHash == again.traceHash && first.events == again.events)
    }

    /// The hardening issue's frozen-worker overcommit (issue 15 §2), plugged back into
    /// the shell: a worker that turns alive again is offered as new, its attempts in
    /// flight forgotten. Paused workers make the simulator find it in a few seeds.
    @Test func theOldShellThatForgotAttemptsInFlightIsCaught() async {
        let (failures, line) = await runBlocking("simulation") { Self.sweep(seeds: 1...20, forgets: true, kinds: [.pause]) }
        print(line + "; the old shell failed \(failures.count) of 20 seeds, first seed \(failures.first?.0 ?? 0)")
        #expect(!failures.isEmpty, "the invariant did not catch a shell that forgets attempts in flight")
        #expect(failures.first?.1.contains("attempts out on") == true, "\(failures.first?.1 ?? "")")
    }
}
