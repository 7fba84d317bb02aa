import Foundation
import SpokesBikes
import SpokesCluster
import SpokesClusterTestKit
import SpokesConcurrency
import SpokesTestKit

/// In-process nodes on loopback, as `spokes node` runs them (a worker that runs bike
/// users, a job desk), with a discovery port and cluster name of the test's own.
struct DashboardCluster {
    let nodes: [ClusterNode]
    let services: [JobService]
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
        let services = cluster.nodes.map { node in
            ClusterSystem.withWellKnownName(JobService.wellKnownName) { JobService(actorSystem: node.system, node: node) }
        }
        try await cluster.awaitMesh()
        return DashboardCluster(nodes: cluster.nodes, services: services, dataDirectory: dataDirectory)
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
