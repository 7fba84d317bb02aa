import Foundation
import SpokesBikes
import SpokesCluster
import SpokesClusterTestKit
import SpokesConcurrency
import SpokesJobs
import SpokesTestKit

/// In-process nodes on loopback, as `spokes node` runs them (a worker that runs bike
/// users, a job desk), with a discovery port and cluster name of the test's own.
struct DashboardCluster {
    let nodes: [ClusterNode]
    /// Each node's bike job desk (`bikejobs`), and its `jobs` desk (kept: the actor
    /// system does not keep actors alive).
    let services: [BikeJobService]
    let desks: [JobService]
    /// Where the nodes keep their job records; removed by ``stop()``.
    let dataDirectory: TemporaryDirectory

    static func start(_ count: Int, slots: Int = 4, secret: ClusterSecret? = nil) async throws -> DashboardCluster {
        let dataDirectory = try TemporaryDirectory()
        let cluster = try TestCluster(
            count, prefix: "d", slots: slots,
            configure: { _, settings in
                settings.secret = secret
                settings.dataDirectory = dataDirectory.path
            },
            registry: { _ in TaskRegistry(kinds: BikeKinds.all) })
        var hosted: [(jobs: JobService, bikes: BikeJobService)] = []
        for node in cluster.nodes { hosted.append(await BikeJobService.hostDesks(on: node)) }
        try await cluster.awaitMesh()
        return DashboardCluster(nodes: cluster.nodes, services: hosted.map(\.bikes), desks: hosted.map(\.jobs), dataDirectory: dataDirectory)
    }

    func stop() {
        nodes.forEach { $0.stop() }
        dataDirectory.remove()
    }

    /// A small contended network: the first six Milano stations.
    static func network() throws -> Network {
        var network = try BundledNetworks.milano
        network.stations = Array(network.stations.prefix(6))
        return network
    }
}
