import SpokesCluster
import SpokesConcurrency
import SpokesJobs
@testable import SpokesBikes

extension BikeJob {
    /// Runs the job with `node` as its coordinator, as a node runs a submitted one: on its
    /// job desk as the bike workload. The first time, the node's desks are hosted
    /// (``BikeJobService/hostDesks(on:store:live:)``), their reports in a store on a disk
    /// in memory.
    func run(on node: ClusterNode) async throws -> SimulationReport {
        let id = ActorID(node: node.system.node, name: BikeJobService.wellKnownName)
        let bikes: BikeJobService
        if let hosted = try? BikeJobService.resolve(id: id, using: node.system) {
            bikes = hosted
        } else {
            let store = JobStore(directory: "/jobs/" + node.system.node.name, disk: SimulatedDisk())
            bikes = await BikeJobService.hostDesks(on: node, store: store).bikes
            node.keep(bikes)
        }
        return try await bikes.submit(self, listener: nil)
    }
}
