import Foundation
import SpokesCluster
import SpokesJobs
import SpokesTestKit

/// Nodes in the test's own process on loopback, with a cluster name and a discovery port
/// of their own, so parallel tests never meet: the one in-process cluster builder every
/// test target uses.
public struct TestCluster: Sendable {
    /// The started nodes, named `prefix` + index.
    public let nodes: [ClusterNode]

    /// Starts `count` nodes named `prefix0`, `prefix1`, ...; `configure` adjusts node
    /// `index`'s settings (after the cluster's name, port and a 50 ms beacon interval are
    /// set), `registry` gives its kinds, `faults` its injected faults. Call
    /// ``awaitMesh(within:)`` to wait until they see each other, and ``stop()`` at the end.
    public init(
        _ count: Int, prefix: String = "n", slots: Int? = nil, configure: (Int, inout ClusterSettings) -> Void = { _, _ in },
        registry: (Int) -> TaskRegistry = { _ in TaskRegistry() }, faults: (Int) -> ScanSystem.Faults = { _ in .init() }
    ) throws {
        let port = TestPorts.discovery()
        let cluster = "\(prefix)-\(UUID().uuidString.prefix(8))"
        nodes = try (0..<count).map { index in
            var settings = ClusterSettings()
            settings.cluster = cluster
            settings.nodeName = "\(prefix)\(index)"
            settings.discoveryPort = port
            settings.discoveryInterval = 0.05
            if let slots { settings.slots = slots }
            configure(index, &settings)
            let node = try ClusterNode(settings: settings, registry: registry(index), faults: faults(index))
            node.start()
            TaskJobs.host(on: node)
            return node
        }
    }

    /// Nodes started elsewhere, to add more like them (``startNode(named:registry:)``).
    public init(nodes: [ClusterNode]) {
        self.nodes = nodes
    }

    public subscript(index: Int) -> ClusterNode { nodes[index] }

    /// Waits until every node sees every other one alive.
    public func awaitMesh(within seconds: Double = 10) async throws {
        let others = nodes.count - 1
        try await eventually("every node sees the \(others) others alive: \(nodes.map { "\($0.system.node.name): \($0.members)" })", within: seconds) {
            nodes.allSatisfy { node in node.members.count { $0.state == .alive } >= others }
        }
    }

    /// A node named `name` joining this cluster (like node 0, on a port of its own, then
    /// `configure`d), started.
    public func startNode(
        named name: String, registry: TaskRegistry = TaskRegistry(), configure: (inout ClusterSettings) -> Void = { _ in }
    ) throws -> ClusterNode {
        var settings = nodes[0].settings
        settings.nodeName = name
        settings.port = 0
        configure(&settings)
        let node = try ClusterNode(settings: settings, registry: registry)
        node.start()
        TaskJobs.host(on: node)
        return node
    }

    /// Stops every node.
    public func stop() {
        for node in nodes { node.stop() }
    }
}
