import Foundation
import SpokesConcurrency
import Synchronization
import SpokesClusterTestKit
import SpokesTestKit
import Testing
@testable import SpokesCluster

/// Membership of nodes that ship: on a simulated network under a virtual clock (the unit
/// lane), with bounds in virtual seconds that follow from the settings; real UDP
/// broadcast and raw datagrams on loopback in the process lane.
@Suite(.simulated, .hangGuard)
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

    /// Discovery by real UDP broadcast on loopback: the beacons the other tests simulate.
    @Test(.processLane) func threeNodesFindEachOtherByLoopbackBroadcast() async throws {
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
    /// Without discovery, every node given only the hub as its peer: each learns the
    /// others from the hub's member list (a star before members told each other), within
    /// a few of the member-list rounds (one every 2 s) and the first dials.
    @Test func nodesThatKnowOnlyOnePeerLearnTheWholeClusterFromIt() async throws {
        let cluster = try SimulatedCluster(1, configure: { $1.discoveryMode = .off })
        defer { cluster.stop() }
        let address = cluster[0].system.address.description
        let spokes = try (1...3).map { index in
            try cluster.startNode(named: "n\(index)") { settings in
                settings.discoveryMode = .off
                settings.peers = [address]
            }
        }
        let nodes = cluster.nodes + spokes
        try await cluster.run(until: "every node sees the 3 others alive", within: 3 * ClusterNode.memberListInterval) {
            nodes.allSatisfy { node in node.members.count(where: { $0.state == .alive }) == 3 }
        }
        #expect(spokes[0].members.map(\.node.name) == ["n0", "n2", "n3"])
    }

    @Test func seedsWorkWithDiscoveryOff() async throws {
        let cluster = try SimulatedCluster(1, prefix: "s", configure: { $1.discoveryMode = .off })
        defer { cluster.stop() }
        let seedNode = cluster[0]
        let address = seedNode.system.address.description
        let joiner = try cluster.startNode(named: "s1") { settings in
            settings.discoveryMode = .off
            settings.peers = [address]
        }
        try await cluster.run(until: "s0 and s1 see each other alive", within: 2) {
            seedNode.members.first?.node.name == "s1" && seedNode.members.first?.state == .alive
                && joiner.members.first?.node.name == "s0" && joiner.members.first?.state == .alive
        }
    }

    @Test func aStoppedNodeIsSeenLeavingAtOnce() async throws {
        let cluster = try SimulatedCluster(2)
        defer { cluster.stop() }
        try await cluster.awaitMesh()
        let leaving = cluster[1]
        let stopped = cluster.clock.now
        try await cluster.complete("n1 stops", within: 2) { await leaving.stop() }
        try await cluster.run(until: "n0 sees n1 leave", within: 2) { cluster[0].members.first?.state == .left }
        let seen = cluster.clock.now - stopped
        #expect(seen < cluster[0].settings.heartbeatInterval, "told by n1's goodbye, not judged on silence: \(seen) virtual s")
    }

    @Test func statusListsEveryMember() async throws {
        let cluster = try SimulatedCluster(2)
        defer { cluster.stop() }
        try await cluster.awaitMesh()
        let client = try cluster.client()
        let address = cluster[1].system.address
        let peer = try await cluster.complete("the client joins n1", within: 5) { try await client.join(address) }
        let status = try NodeStatus.resolve(id: ActorID(node: peer.node, name: NodeStatus.wellKnownName), using: client)
        let members = try await cluster.complete("n1 lists its members", within: 5) { try await status.members() }
        #expect(members.map(\.name) == ["n1", "n0"])
        #expect(members.map(\.state) == ["alive", "alive"])
        #expect(members[0].uptime != nil)
        #expect(!cluster[1].members.contains { $0.node == client.node }, "a client is not a member")
    }

    /// The conflict `node` finds within 10 virtual seconds.
    static func conflict(of node: ClusterNode, in cluster: SimulatedCluster) async throws -> NameConflict {
        let found = node.nameConflict
        return try await cluster.complete("\(node.system.node) finds that its name is taken", within: 10) { await found.value }
    }

    @Test func aNewcomerWithALiveMembersNameStopsAndTheMemberIsNotDisturbed() async throws {
        let cluster = try SimulatedCluster(2)
        defer { cluster.stop() }
        try await cluster.awaitMesh()
        let nodes = cluster.nodes
        let original = nodes[1].system.node
        let seen = Mutex<[MembershipEvent]>([])
        let events = nodes[0].membershipEvents()
        let watching = Task { for await event in events { seen.withLock { $0.append(event) } } }
        let impostor = try cluster.startNode(named: "n1")
        let conflict = try await Self.conflict(of: impostor, in: cluster)
        #expect(conflict == NameConflict(name: "n1", address: nodes[1].system.address.description))
        // Long enough for any of n0's verdicts: the member is judged on its silence by then.
        try await cluster.run(for: nodes[0].settings.deadTimeout + 2 * nodes[0].settings.heartbeatInterval)
        #expect(nodes[1].nameTaken == nil && nodes[0].nameTaken == nil)
        // The member keeps its place: still alive under its own incarnation, never
        // removed, replaced or changed on n0, and n0 never connected to the impostor.
        #expect(nodes[0].members.first?.node == original && nodes[0].members.first?.state == .alive)
        #expect(!nodes[0].system.connectedPeers.contains { $0.node == impostor.system.node })
        watching.cancel()
        #expect(seen.withLock { $0 }.isEmpty, "n0 saw membership change: \(seen.withLock { $0 })")
    }

    @Test func ofTwoNodesWithOneNameTheLaterOneStops() async throws {
        let cluster = try SimulatedCluster(1)
        defer { cluster.stop() }
        let twin = try cluster.startNode(named: "n0")
        let conflict = try await Self.conflict(of: twin, in: cluster)
        #expect(conflict.address == cluster[0].system.address.description)
        #expect(cluster[0].nameTaken == nil, "the node that started first keeps its name")
    }

    @Test func aNodeThatLeftIsReplacedByItsRestartAtOnce() async throws {
        let cluster = try SimulatedCluster(2)
        defer { cluster.stop() }
        try await cluster.awaitMesh()
        let nodes = cluster.nodes
        try await cluster.complete("n1 stops", within: 2) { await nodes[1].stop() }
        try await cluster.run(until: "n0 sees n1 leave", within: 2) { nodes[0].members.first?.state == .left }
        let restarted = try cluster.startNode(named: "n1")
        let start = cluster.clock.now
        // Well within the 60 s a dead or left entry is kept: admitted as soon as it is heard.
        try await cluster.run(until: "n0 sees the restarted n1 alive", within: 1) {
            nodes[0].members.first?.node == restarted.system.node && nodes[0].members.first?.state == .alive
        }
        #expect(cluster.clock.now - start < 1, "admitted at once: \(cluster.clock.now - start) virtual s")
        #expect(restarted.nameTaken == nil, "old n1 was \(nodes[1].system.address), n0 is \(nodes[0].system.address)")
    }

    /// Two clusters whose beacons share a port: each ignores the other's.
    @Test func beaconsOfAnotherClusterAreIgnored() async throws {
        let cluster = try SimulatedCluster(1)
        defer { cluster.stop() }
        let stranger = try cluster.startNode(named: "x0") { $0.cluster = "theirs" }
        try await cluster.run(until: "each node ignored the other's beacons", within: 2) {
            cluster[0].ignoredBeacons >= 1 && stranger.ignoredBeacons >= 1
        }
        try await cluster.run(for: 1)
        #expect(cluster[0].members.isEmpty && stranger.members.isEmpty, "neither admitted the other cluster's node")
        #expect(cluster[0].system.connectedPeers.isEmpty)
    }

    /// Garbage datagrams from a raw socket: hostile input at the socket level stays on
    /// real sockets.
    @Test(.processLane) func beaconsOfOtherClustersAndGarbageAreIgnored() async throws {
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
