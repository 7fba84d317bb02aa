import Foundation
import SpokesConcurrency
import Testing
@testable import SpokesSimulation

/// A bike job's exactly-once rules in the simulator: the real `JobLedger` on the
/// coordinator, users walking on workers under seeded faults.
@Suite struct BikeJobSimulationTests {
    static func options(_ seed: UInt64) -> SimulationOptions { SimulationOptions(seed: seed, faultWindow: 8, settle: 15) }

    @Test func bikesAreConservedAndEachUserIsCountedOnceUnderSeededFaults() async {
        let (failures, line) = await runBlocking("simulation") { () -> ([(UInt64, String)], String) in
            var failures: [(UInt64, String)] = []
            var attempts = 0, users = 0
            let start = Date()
            for seed: UInt64 in 1...25 {
                let (result, model) = Simulation.play(BikeJobModel(options: BikeJobModel.Options()), options: Self.options(seed))
                attempts += model.attemptsStarted
                users += model.options.users
                if result.failed {
                    let shrunk = Simulation.shrink(result, model: { BikeJobModel(options: BikeJobModel.Options()) }, options: Self.options(seed))
                    failures.append((seed, Simulation<BikeJobModel>.report(shrunk, lines: 60)))
                }
            }
            return (failures, "bike job: 25 seeds in \(fixed(Date().timeIntervalSince(start), 2)) s, \(attempts) attempts for \(users) users")
        }
        print(line)
        #expect(failures.isEmpty, "\(failures.count) seeds failed; seed \(failures.first?.0 ?? 0), shrunk:\n\(failures.first?.1 ?? "")")
    }

    @Test func aSeedReplaysTheSameRun() {
        let first = Simulation.run(BikeJobModel(options: BikeJobModel.Options()), options: Self.options(3))
        let again = Simulation.run(BikeJobModel(options: BikeJobModel.Options()), options: Self.options(3))
        #expect(first.traceHash == again.traceHash && first.events == again.events)
    }
}
