import Foundation
import SpokesConcurrency
import Testing
@testable import SpokesSimulation

/// The cluster's membership in the simulator: N nodes' real `Membership` state machines
/// over a faulty virtual network (crashes and restarts, pauses, partitions one- and
/// two-way, loss, duplication, delay, slow nodes, tick jitter), seeded.
@Suite struct MembershipSimulationTests {
    static func model(_ nodes: Int, feedsHeardEveryTick: Bool = false) -> MembershipModel {
        var options = MembershipModel.Options(nodes: nodes)
        options.feedsHeardEveryTick = feedsHeardEveryTick
        return MembershipModel(options: options)
    }

    static func options(_ seed: UInt64) -> SimulationOptions { SimulationOptions(seed: seed, faultWindow: 10, settle: 6) }

    /// Plays `seeds` of `nodes` nodes; the shrunk report of each failing seed.
    static func sweep(nodes: Int, seeds: ClosedRange<UInt64>, feedsHeardEveryTick: Bool = false) -> (failures: [(UInt64, String)], line: String) {
        var failures: [(UInt64, String)] = []
        let start = Date()
        var virtual = 0.0, events = 0, recoveries = 0
        for seed in seeds {
            let (result, model) = Simulation.play(model(nodes, feedsHeardEveryTick: feedsHeardEveryTick), options: options(seed))
            virtual += result.virtualSeconds
            events += result.events
            recoveries += model.recoveries
            if result.failed {
                let shrunk = Simulation.shrink(result, model: { Self.model(nodes, feedsHeardEveryTick: feedsHeardEveryTick) }, options: options(seed))
                failures.append((seed, Simulation<MembershipModel>.report(shrunk, lines: 60)))
            }
        }
        let wall = Date().timeIntervalSince(start)
        let line = "membership: \(nodes) nodes, \(seeds.count) seeds in \(fixed(wall, 2)) s, \(events) events, "
            + "\(fixed(virtual, 0)) virtual s (\(fixed(virtual / wall, 0))x real time), \(recoveries) suspicions cleared by news"
        return (failures, line)
    }

    @Test(arguments: [3, 5, 10])
    func membershipKeepsItsInvariantsAndConvergesUnderSeededFaults(nodes: Int) async {
        // Few seeds here (the suite runs everything at once on two cores); CI's
        // Scripts/simulate-cluster plays hundreds.
        let (failures, line) = await runBlocking("simulation") { Self.sweep(nodes: nodes, seeds: 1...(nodes == 10 ? 5 : 25)) }
        print(line)
        #expect(failures.isEmpty, "\(failures.count) seeds failed; seed \(failures.first?.0 ?? 0), shrunk:\n\(failures.first?.1 ?? "")")
    }

    @Test func aSeedReplaysTheSameRun() {
        let first = Simulation.run(Self.model(5), options: Self.options(11))
        let again = Simulation.run(Self.model(5), options: Self.options(11))
        #expect(first.traceHash == again.traceHash && first.events == again.events)
        #expect(Simulation.run(Self.model(5), options: Self.options(12)).traceHash != first.traceHash)
    }

    /// The hardening issue's duplicate-name bug, plugged back into the shell: a second
    /// process started with a live member's name (`m2-twin`, a newer incarnation of `m2`)
    /// is admitted and evicts `m2`. Today's handshake refuses it and the twin yields.
    @Test func aTwinOfALiveMemberIsRefusedAndTheOldShellThatLetItEvictTheMemberIsCaught() async {
        @Sendable func sweep(admits: Bool) -> [(UInt64, String)] {
            var options = MembershipModel.Options(nodes: 3)
            options.twinStartsAt = 2
            options.admitsTakenNames = admits
            var failures: [(UInt64, String)] = []
            for seed: UInt64 in 1...20 {
                let run = SimulationOptions(seed: seed, faultWindow: 10, faultKinds: [.delay, .loss, .duplication, .slow], settle: 6)
                let result = Simulation.run(MembershipModel(options: options), options: run)
                if result.failed {
                    failures.append((seed, Simulation<MembershipModel>.report(Simulation.shrink(result, model: { MembershipModel(options: options) }, options: run), lines: 40)))
                }
            }
            return failures
        }
        let today = await runBlocking("simulation") { sweep(admits: false) }
        #expect(today.isEmpty, "seed \(today.first?.0 ?? 0):\n\(today.first?.1 ?? "")")
        let old = await runBlocking("simulation") { sweep(admits: true) }
        print("the shell that admitted taken names failed \(old.count) of 20 seeds, first seed \(old.first?.0 ?? 0)")
        #expect(!old.isEmpty, "the invariant did not catch a shell that lets a twin evict a live member")
        #expect(old.first?.1.contains("by another incarnation of its name") == true, "\(old.first?.1 ?? "")")
    }

    /// The hardening issue's flapping bug (issue 15 §2), plugged back into the shell: a
    /// silent peer's `heard` fed every tick, news or not, keeps a frozen or crashed peer
    /// alive. The simulator finds it on the first seeds; today's shell passes them all.
    @Test func theOldShellThatFedHeardEveryTickIsCaught() async {
        let (failures, line) = await runBlocking("simulation") { Self.sweep(nodes: 3, seeds: 1...10, feedsHeardEveryTick: true) }
        print(line + "; the old shell failed \(failures.count) of 10 seeds, first seed \(failures.first?.0 ?? 0)")
        #expect(!failures.isEmpty, "the invariant did not catch a shell that brings silent peers back")
        #expect(failures.first?.1.contains("with no message from it") == true, "\(failures.first?.1 ?? "")")
    }
}
