import Foundation
import Testing
import SpokesConcurrency
import SpokesConsensus
@testable import SpokesSimulation

/// Serialized, and each sweep on a thread of its own (`runBlocking`): these tests are
/// seconds of CPU, and on the cooperative pool they would delay every other test's timers.
@Suite(.serialized) struct RaftSimulationTests {
    /// Seeds per group size; `SPOKES_SIM_SEEDS=N swift test --filter RaftSimulationTests`
    /// runs a longer sweep (CI runs 60 on their own). 20 in the full suite: with 60 these
    /// were some 40 s of its CPU, and the timing tests beside them failed under the load.
    /// (At 200, 4-5 seeds of two-replica groups fail liveness, seed 116 first: replication
    /// under reordering and a slowed leader does not converge within 5 s of the heal.)
    static let seeds = UInt64(ProcessInfo.processInfo.environment["SPOKES_SIM_SEEDS"] ?? "") ?? 20

    static func model(_ replicas: Int) -> RaftClusterModel {
        RaftClusterModel(options: RaftClusterModel.Options(replicas: replicas))
    }

    /// Safety after every event (see `RaftInvariants`) and liveness after the faults
    /// heal: a command proposed then is acknowledged within 5 virtual seconds, and every
    /// replica ends with the same commands applied once, in one order, every
    /// acknowledged one among them.
    @Test(arguments: [1, 2, 3, 5])
    func raftGroupsStaySafeAndLiveUnderSeededFaults(replicas: Int) async {
        let failures = await runBlocking("simulation") { Self.sweep(replicas: replicas) }
        #expect(failures.isEmpty, "\(failures.count) seeds failed; the first, shrunk:\n\(failures.first ?? "")")
    }

    /// Plays `seeds` seeds of a group of `replicas`; the shrunk report of each failure.
    static func sweep(replicas: Int) -> [String] {
        var failures: [String] = []
        let start = Date()
        var virtual = 0.0
        var events = 0
        var slowestRecovery = 0.0
        for seed in 1...seeds {
            let options = SimulationOptions(seed: seed, faultWindow: 10, settle: 8)
            let (result, model) = Simulation.play(model(replicas), options: options)
            virtual += result.virtualSeconds
            events += result.events
            slowestRecovery = max(slowestRecovery, model.recoveryTime ?? .infinity)
            if result.failed {
                let shrunk = Simulation.shrink(result, model: { Self.model(replicas) }, options: options)
                failures.append(Simulation<RaftClusterModel>.report(shrunk, lines: 200))
            }
        }
        let wall = Date().timeIntervalSince(start)
        print("simulation: \(replicas) replicas, \(seeds) seeds in \(fixed(wall, 2)) s (\(fixed(Double(seeds) / wall, 1)) seeds/s, \(events) events), \(fixed(virtual, 0)) virtual s (\(fixed(virtual / wall, 0))x real time), slowest recovery after healing \(fixed(slowestRecovery, 2)) s")
        return failures
    }

    @Test func aSeedReplaysTheSameRunAndSeedsDiffer() {
        let options = SimulationOptions(seed: 7)
        let first = Simulation.run(Self.model(3), options: options)
        let again = Simulation.run(Self.model(3), options: options)
        #expect(first.traceHash == again.traceHash && first.events == again.events)
        let hashes = Set((1...20).map { Simulation.run(Self.model(3), options: SimulationOptions(seed: $0)).traceHash })
        #expect(hashes.count == 20)
    }

    /// The issue's target: a new leader within 2 s of the leader's death with the
    /// default timing (heartbeat 0.1 s, election timeout 0.6-1.2 s), here in virtual
    /// time with 0.5-5 ms messages and 0.2-3 ms flushes.
    @Test func aNewLeaderIsElectedWithinTwoSecondsOfTheLeadersCrash() async {
        await runBlocking("simulation") { Self.electionAfterCrash() }
    }

    static func electionAfterCrash() {
        var times: [Double] = []
        for seed in UInt64(1)...60 {
            let crash = SimulationFault(start: 3, duration: 2, effect: .crash(node: "n1"))
            let options = SimulationOptions(seed: seed, settle: 6)
            let model = RaftClusterModel(options: RaftClusterModel.Options(replicas: 3, varyBatching: false, clients: 1))
            let (result, final) = Simulation.play(model, options: options, faults: [crash])
            #expect(!result.failed, "seed \(seed): \(result.violation?.description ?? "")")
            guard let election = final.invariants.elections.first(where: { $0.time > 3 }) else {
                Issue.record("seed \(seed): no leader after n1 crashed")
                continue
            }
            times.append(election.time - 3)
        }
        times.sort()
        guard !times.isEmpty else { return }
        print("election after a leader crash (3 replicas, 60 seeds): median \(fixed(times[times.count / 2], 3)) s, 99th percentile \(fixed(times[times.count * 99 / 100], 3)) s, max \(fixed(times.last!, 3)) s")
        #expect(times.last! < 2)
    }

    /// The checker's own test: a shell that sends votes and acknowledgements before the
    /// writes behind them are durable is caught (a crash takes back a vote or an entry).
    @Test func theInvariantsCatchAShellThatSendsBeforePersisting() async {
        await runBlocking("simulation") { Self.brokenShellIsCaught() }
    }

    static func brokenShellIsCaught() {
        var found: SimulationResult?
        var options = SimulationOptions(seed: 0, faultCount: 4...10, faultKinds: [.crash])
        for seed in UInt64(1)...300 {
            options.seed = seed
            var broken = RaftClusterModel.Options(replicas: 3)
            broken.sendBeforePersist = true
            broken.diskLatency = 0.005...0.05
            let result = Simulation.run(RaftClusterModel(options: broken), options: options)
            if result.failed {
                found = result
                break
            }
        }
        #expect(found != nil, "no seed caught the broken shell")
        if let found { print("broken shell caught by seed \(found.seed): \(found.violation!)") }
    }

    /// Found by the bike failover model (seed 83 under the simulator's old copy of the shell): a
    /// replica paused as a candidate counts a vote of its term after a later term's leader
    /// committed more, and leads its stale term. Raft allows it (a leader must hold what
    /// earlier terms committed, and a stale term commits nothing), so `RaftInvariants`
    /// must not call it a violation. Fed to the checker directly: which seed plays it
    /// depends on the shells' timing.
    @Test func aStaleTermsLeaderIsNoViolation() throws {
        let group = try RaftGroup(replicas: ["n1", "n2", "n3"])
        var invariants = RaftInvariants(group: group)
        let first = RaftEntry(index: 1, term: 1, command: "a")
        let third = RaftEntry(index: 2, term: 3, command: "b")
        func replica(_ id: String, term: Int, _ entries: [RaftEntry]) throws -> RaftReplica {
            let state = RaftDurableState(hardState: RaftHardState(term: term, votedFor: id), entries: entries)
            return try RaftReplica(id: id, group: group, state: state, seed: 1)
        }
        let leaderOf3 = try replica("n1", term: 3, [first, third])
        invariants.statusChanged("n1", RaftStatus(role: .leader, term: 3, leader: "n1"), replica: leaderOf3, now: 1)
        invariants.applied("n1", [first, third], term: 3)
        // n3, paused as a candidate of term 2, leads it later; it holds what term 1 committed.
        let staleLeader = try replica("n3", term: 2, [first])
        invariants.statusChanged("n3", RaftStatus(role: .leader, term: 2, leader: "n3"), replica: staleLeader, now: 2)
        #expect(invariants.violation == nil, "\(invariants.violation ?? "")")
        // Without what term 1 committed it would be a violation (the checker still checks).
        var strict = invariants
        let empty = try replica("n2", term: 4, [])
        strict.statusChanged("n2", RaftStatus(role: .leader, term: 4, leader: "n2"), replica: empty, now: 3)
        #expect(strict.violation?.hasPrefix("leader completeness") == true, "\(strict.violation ?? "no violation")")
    }
}
