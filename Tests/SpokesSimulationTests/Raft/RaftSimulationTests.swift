import Foundation
import Testing
import SpokesConsensus
@testable import SpokesSimulation

@Suite struct RaftSimulationTests {
    static func model(_ replicas: Int) -> RaftClusterModel {
        RaftClusterModel(options: RaftClusterModel.Options(replicas: replicas))
    }

    @Test(arguments: [1, 2, 3, 5])
    func raftGroupsStaySafeAndLiveUnderSeededFaults(replicas: Int) async {
        let seeds: ClosedRange<UInt64> = 1...(UInt64(ProcessInfo.processInfo.environment["SIM_SEEDS"] ?? "") ?? 60)
        var failures: [String] = []
        let start = Date()
        var events = 0
        var virtual = 0.0
        for seed in seeds {
            let options = SimulationOptions(seed: seed)
            let result = Simulation.run(Self.model(replicas), options: options)
            events += result.events
            virtual += result.virtualSeconds
            if result.failed {
                let shrunk = Simulation.shrink(result, model: { Self.model(replicas) }, options: options)
                failures.append(Simulation<RaftClusterModel>.report(shrunk, lines: 150))
            }
            await Task.yield()
        }
        let wall = Date().timeIntervalSince(start)
        print("raft \(replicas): \(seeds.count) seeds, \(events) events, \(virtual) virtual s in \(wall) s wall")
        #expect(failures.isEmpty, "\(failures.count) seeds failed:\n\(failures.first ?? "")")
    }
}
