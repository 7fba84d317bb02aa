import Testing
@testable import SpokesSimulation

/// Whole nodes in the simulator (issue 28 §2): `NodesModel` plays seeds of three nodes
/// assembled as `spokes node` assembles them, with real clients and seeded crashes,
/// partitions and loss, in virtual time; `simulate-cluster --model nodes` plays more.
@Suite(.serialized) struct NodesSimulationTests {
    @Test(.timeLimit(.minutes(2)))
    func threeNodesKeepEveryJobsInvariantsOverTwoSeeds() async {
        // Lighter than the command's seeds (two maps of four tasks, a bike job, one or two
        // faults): a few seconds each in a debug build.
        var options = NodesModel.Options(nodes: 3)
        options.maps = 2
        options.tasksPerMap = 4
        options.faultCount = 1...2
        for seed: UInt64 in 1...2 {
            let verdict = await NodesModel.play(seed: seed, options: options)
            #expect(verdict.violation == nil, "seed \(seed): \(verdict.violation ?? "") \n\(verdict.faults)\n\(verdict.trace.suffix(40).joined(separator: "\n"))")
        }
    }

    @Test func aSeedDrawsItsFaultsOneAfterAnother() {
        let options = NodesModel.Options(nodes: 5)
        for seed: UInt64 in 1...50 {
            let plan = NodesModel.plan(seed: seed, options: options)
            #expect(plan == NodesModel.plan(seed: seed, options: options), "the same seed, the same plan")
            #expect(options.faultCount.contains(plan.count))
            for (earlier, later) in zip(plan, plan.dropFirst()) { #expect(earlier.end <= later.start, "faults do not overlap") }
            #expect(plan.allSatisfy { (0..<5).contains($0.node) })
            #expect(plan.allSatisfy { !($0.kind == .loss && $0.atCoordinator) }, "loss hits no node")
        }
    }
}
