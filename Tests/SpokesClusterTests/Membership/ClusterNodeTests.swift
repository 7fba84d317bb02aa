import Foundation
import SpokesConcurrency
import Synchronization
import SpokesClusterTestKit
import SpokesTestKit
import Testing
@testable import SpokesCluster

/// Real nodes on loopback, finding each other by loopback broadcast on a port and with a
/// cluster name of the test's own, so parallel tests never meet.
@Suite(.processLane, .timeLimit(.minutes(1)))
struct ClusterNodeTests {
    /// `count` nodes `n0`, `n1`, ... on a cluster and discovery port of their own, unless given.
    static func startNodes(_ count: Int, discoveryPort: UInt16? = nil, cluster: String? = nil) throws -> [ClusterNode] {
        try TestCluster(count, configure: { _, settings in
            if let discoveryPort { settings.discoveryPort = discoveryPort }
            if let cluster { settings.cluster = cluster }
        }).nodes
    }

    /// Waits (at most `seconds`) until `condition` holds for `node`'s members.
    static func waitUntil(_ node: ClusterNode, seconds: Double = 10, _ what: String, _ condition: @escaping @Sendable ([Member]) -> Bool) async throws {
        let events = node.membershipEvents()
        if condition(node.members) { return }
        do {
            try await withTimeout(seconds: seconds) {
                for await _ in events where condition(node.members) { return }
            }
        } catch is TimeoutError {
            Issue.record("\(node.system.node.name): not \(what) within \(seconds) s; members: \(node.members)")
        }
    }

    /// A node named `name` joining the cluster of `node`, started.
    static func startNode(named name: String, like node: ClusterNode) throws -> ClusterNode {
        try TestCluster(nodes: [node]).startNode(named: name)
    }

    /// The conflict `node` found within 10 s, or nil (recorded as an issue).
    static func conflict(of node: ClusterNode) async throws -> NameConflict? {
        do {
            return try await withTimeout(seconds: 10) { await node.nameConflict.value }
        } catch is TimeoutError {
            Issue.record("\(node.system.node) did not find that its name is taken within 10 s")
            return nil
        }
    }

    @Test func threeNodesFindEachOtherByLoopbackBroadcast() async throws {
        let nodes = try Self.startNodes(3)
        defer { nodes.forEach { $0.stop() } }
        for node in nodes {
            try await Self.waitUntil(node, "seeing 2 alive peers") { members in
                members.count(where: { $0.state == .alive }) == 2
            }
        }
        #expect(nodes[0].members.map(\.node.name) == ["n1", "n2"])
    }

    /// Without discovery, every node given only the hub as its peer: each learns the
    /// others from the hub's member list (a star before members told each other).
    @Test func nodesThatKnowOnlyOnePeerLearnTheWholeClusterFromIt() async throws {
        let hub = try TestCluster(1, configure: { $1.discoveryMode = .off })
        let address = hub[0].system.address.description
        let spokes = try (1...3).map { index in
            try hub.startNode(named: "n\(index)") { $0.peers = [address] }
        }
        let nodes = hub.nodes + spokes
        defer { nodes.forEach { $0.stop() } }
        for node in nodes {
            try await Self.waitUntil(node, "seeing the 3 others alive") { members in
                members.count(where: { $0.state == .alive }) == 3
            }
        }
        #expect(spokes[0].members.map(\.node.name) == ["n0", "n2", "n3"])
    }

    @Test func seedsWorkWithDiscoveryOff() async throws {
        var first = ClusterSettings()
        first.nodeName = "s0"
        first.discoveryMode = .off
        let seedNode = try ClusterNode(settings: first)
        seedNode.start()
        var second = first
        second.nodeName = "s1"
        second.peers = [seedNode.system.address.description]
        let joiner = try ClusterNode(settings: second)
        joiner.start()
        defer { [seedNode, joiner].forEach { $0.stop() } }
        try await Self.waitUntil(seedNode, "seeing s1 alive") { $0.first?.node.name == "s1" && $0.first?.state == .alive }
        try await Self.waitUntil(joiner, "seeing s0 alive") { $0.first?.node.name == "s0" && $0.first?.state == .alive }
    }

    @Test func aStoppedNodeIsSeenLeaving() async throws {
        let nodes = try Self.startNodes(2, discoveryPort: TestPorts.discovery(), cluster: "leave-\(UUID())")
        defer { nodes.forEach { $0.stop() } }
        try await Self.waitUntil(nodes[0], "seeing n1 alive") { $0.first?.state == .alive }
        await nodes[1].stop()
        try await Self.waitUntil(nodes[0], "seeing n1 leave") { $0.first?.state == .left }
    }

    @Test func statusListsEveryMember() async throws {
        let nodes = try Self.startNodes(2, discoveryPort: TestPorts.discovery(), cluster: "status-\(UUID())")
        defer { nodes.forEach { $0.stop() } }
        try await Self.waitUntil(nodes[0], "seeing n1 alive") { $0.first?.state == .alive }
        var settings = ClusterSettings()
        settings.cluster = nodes[0].settings.cluster
        let client = try ClusterSystem(settings: settings, isMember: false)
        defer { client.shutdown() }
        let peer = try await client.join(nodes[1].system.address)
        let status = try NodeStatus.resolve(id: ActorID(node: peer.node, name: NodeStatus.wellKnownName), using: client)
        let members = try await status.members()
        #expect(members.map(\.name) == ["n1", "n0"])
        #expect(members.map(\.state) == ["alive", "alive"])
        #expect(members[0].uptime != nil)
        #expect(!nodes[1].members.contains { $0.node == client.node }, "a client is not a member")
    }

    @Test func aNewcomerWithALiveMembersNameStopsAndTheMemberIsNotDisturbed() async throws {
        let nodes = try Self.startNodes(2, discoveryPort: TestPorts.discovery(), cluster: "names-\(UUID())")
        defer { nodes.forEach { $0.stop() } }
        try await Self.waitUntil(nodes[0], "seeing n1 alive") { $0.first?.state == .alive }
        let original = nodes[1].system.node
        let seen = Mutex<[MembershipEvent]>([])
        let events = nodes[0].membershipEvents()
        let watching = Task { for await event in events { seen.withLock { $0.append(event) } } }
        let impostor = try Self.startNode(named: "n1", like: nodes[0])
        defer { impostor.stop() }
        let conflict = try await Self.conflict(of: impostor)
        #expect(conflict == NameConflict(name: "n1", address: nodes[1].system.address.description))
        #expect(nodes[1].nameTaken == nil && nodes[0].nameTaken == nil)
        // The member keeps its place: still alive under its own incarnation, never
        // removed, replaced or changed on n0, and n0 never connected to the impostor.
        #expect(nodes[0].members.first?.node == original && nodes[0].members.first?.state == .alive)
        #expect(!nodes[0].system.connectedPeers.contains { $0.node == impostor.system.node })
        watching.cancel()
        #expect(seen.withLock { $0 }.isEmpty, "n0 saw membership change: \(seen.withLock { $0 })")
    }

    @Test func ofTwoNodesWithOneNameTheLaterOneStops() async throws {
        let nodes = try Self.startNodes(1, discoveryPort: TestPorts.discovery(), cluster: "twins-\(UUID())")
        defer { nodes.forEach { $0.stop() } }
        let twin = try Self.startNode(named: "n0", like: nodes[0])
        defer { twin.stop() }
        let conflict = try await Self.conflict(of: twin)
        #expect(conflict?.address == nodes[0].system.address.description)
        #expect(nodes[0].nameTaken == nil, "the node that started first keeps its name")
    }

    @Test func aNodeThatLeftIsReplacedByItsRestartAtOnce() async throws {
        let nodes = try Self.startNodes(2, discoveryPort: TestPorts.discovery(), cluster: "restart-\(UUID())")
        defer { nodes.forEach { $0.stop() } }
        try await Self.waitUntil(nodes[0], "seeing n1 alive") { $0.first?.state == .alive }
        await nodes[1].stop()
        try await Self.waitUntil(nodes[0], "seeing n1 leave") { $0.first?.state == .left }
        let restarted = try Self.startNode(named: "n1", like: nodes[0])
        defer { restarted.stop() }
        // Well within the 60 s a dead or left entry is kept: admitted at once.
        try await Self.waitUntil(nodes[0], seconds: 5, "seeing the restarted n1 alive") {
            $0.first?.node == restarted.system.node && $0.first?.state == .alive
        }
        #expect(restarted.nameTaken == nil, "old n1 was \(nodes[1].system.address), n0 is \(nodes[0].system.address)")
    }

    @Test func beaconsOfOtherClustersAndGarbageAreIgnored() async throws {
        let port = TestPorts.discovery()
        let nodes = try Self.startNodes(1, discoveryPort: port, cluster: "mine-\(UUID())")
        let strangers = try Self.startNodes(1, discoveryPort: port, cluster: "theirs-\(UUID())")
        defer { (nodes + strangers).forEach { $0.stop() } }
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_BROADCAST, &yes, socklen_t(MemoryLayout<Int32>.size))
        var target = SocketAddress(host: "127.255.255.255", port: port).sockaddr
        for garbage in ["{", "null", String(repeating: "x", count: 4000), #"{"cluster": 5}"#] {
            let bytes = Array(garbage.utf8)
            _ = withUnsafePointer(to: &target) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, bytes, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        // Both kinds must be seen: the other cluster's valid beacons ignored, and each of
        // the four garbage datagrams rejected as malformed.
        let rejections = nodes[0].system.rejections
        do {
            try await withTimeout(seconds: 10) {
                while nodes[0].ignoredBeacons < 1 || rejections[.malformedBeacon] < 4 { try await Task.sleep(for: .milliseconds(20)) }
            }
        } catch is TimeoutError {
            Issue.record("ignored \(nodes[0].ignoredBeacons) beacons of the other cluster, rejected \(rejections[.malformedBeacon]) of 4 garbage datagrams")
        }
        #expect(rejections[.malformedBeacon] == 4, "each garbage datagram rejected once")
        #expect(nodes[0].members.isEmpty, "the other cluster's node was not admitted")
    }
}
