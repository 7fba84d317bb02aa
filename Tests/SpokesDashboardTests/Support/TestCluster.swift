import Foundation
import SpokesBikes
import SpokesCluster
import SpokesConcurrency
import SpokesTestKit

/// In-process nodes on loopback, as `spokes node` runs them (a worker that runs bike
/// users, a job desk), with a discovery port and cluster name of the test's own.
struct TestCluster {
    let nodes: [ClusterNode]
    let services: [JobService]
    /// Where the nodes keep their job records; removed by ``stop()``.
    let dataDirectory: TemporaryDirectory

    static func start(_ count: Int, slots: Int = 4, secret: ClusterSecret? = nil) async throws -> TestCluster {
        let port = TestPorts.discovery()
        let cluster = "dash-\(UUID().uuidString.prefix(8))"
        var nodes: [ClusterNode] = []
        var services: [JobService] = []
        let dataDirectory = try TemporaryDirectory()
        for index in 0..<count {
            var settings = ClusterSettings()
            settings.cluster = cluster
            settings.nodeName = "d\(index)"
            settings.slots = slots
            settings.discoveryPort = port
            settings.discoveryInterval = 0.05
            settings.secret = secret
            settings.dataDirectory = dataDirectory.path
            let registry = TaskRegistry(kinds: BikeKinds.all)
            let node = try ClusterNode(settings: settings, registry: registry)
            node.start()
            nodes.append(node)
            services.append(ClusterSystem.withWellKnownName(JobService.wellKnownName) { JobService(actorSystem: node.system, node: node) })
        }
        for node in nodes {
            let events = node.membershipEvents()
            if node.members.count(where: { $0.state == .alive }) < count - 1 {
                try await withTimeout(seconds: 10) {
                    for await _ in events where node.members.count(where: { $0.state == .alive }) == count - 1 { return }
                }
            }
        }
        return TestCluster(nodes: nodes, services: services, dataDirectory: dataDirectory)
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
