import SpokesClusterTestKit
import SpokesTestKit
import SpokesConcurrency
import Testing
@testable import SpokesCluster

/// Nodes of two releases in one cluster, on the simulated network in virtual time (issue
/// 30 §3): a node limited to protocol 3 (``ClusterSettings/protocolVersions``, what the
/// previous release speaks and sends) meets nodes of this build by beacons, every
/// connection agrees the highest version both speak, and the cluster uses protocol 4
/// only once every alive member speaks it. A node or client outside the range is refused
/// with both ranges and what to do. (The previous release's own binary meets this build
/// in `Scripts/test-rolling-upgrade`.)
@Suite(.simulated, .hangGuard)
struct ProtocolUpgradeInVirtualTimeTests {
    @Test func aNodeOfThePreviousProtocolJoinsNewerNodesAndHoldsTheClusterAtItsVersion() async throws {
        let cluster = try SimulatedCluster(3) { index, settings in
            if index == 0 { settings.protocolVersions = .only(3) }
        }
        defer { cluster.stop() }
        try await cluster.awaitMesh()
        let (old, new, newer) = (cluster[0], cluster[1], cluster[2])
        // Per connection: the highest version both speak.
        #expect(new.system.protocolVersion(with: newer.system.node) == ProtocolVersions.current.highest)
        #expect(new.system.protocolVersion(with: old.system.node) == 3)
        #expect(old.system.protocolVersion(with: new.system.node) == 3)
        // The membership record holds each member's range; the cluster waits for the old one.
        #expect(new.members.first { $0.node == old.system.node }?.protocolVersions == .only(3))
        #expect(new.members.first { $0.node == newer.system.node }?.protocolVersions == .current)
        for node in cluster.nodes {
            #expect(node.protocolVersion == 3 && !node.mayUse(protocolVersion: 4), "\(node.system.node.name)")
        }
        #expect(new.membersBehind == [old.system.node.name])

        // The old node is replaced (it leaves; a node of this build takes its place).
        await old.stop()
        let replacement = try cluster.startNode(named: "n0-upgraded")
        try await cluster.run(until: "the cluster uses this build's protocol on every node", within: 10) {
            [new, newer, replacement].allSatisfy { node in
                node.members.count { $0.state == .alive } == 2 && node.mayUse(protocolVersion: ProtocolVersions.current.highest)
            }
        }
        #expect(new.system.protocolVersion(with: replacement.system.node) == ProtocolVersions.current.highest)
        #expect(new.membersBehind.isEmpty)
    }

    @Test func aNodeOutsideTheRangeIsRefusedWithBothRangesAndWhatToDo() async throws {
        let cluster = try SimulatedCluster(2)
        defer { cluster.stop() }
        try await cluster.awaitMesh()
        let target = cluster[0].system.address
        let tooOld = try cluster.system(named: "ancient") { $0.protocolVersions = .only(2) }
        do {
            try await cluster.complete("the old node's dial ends", within: 10) { try await tooOld.join(target) }
            Issue.record("a node of protocol 2 was admitted")
        } catch {
            let text = "\(error)"
            #expect(text.contains("node ancient speaks protocol 2 and node n0 speaks 3 to 7"), "\(text)")
            #expect(text.contains("upgrade node ancient to a release that speaks 3"), "\(text)")
        }
        // The other way round: a node of this build dials a node of a later release whose
        // range it does not meet; the newer one refuses, saying which to upgrade.
        let future = try cluster.startNode(named: "future") { $0.protocolVersions = ProtocolVersions(lowest: 8, highest: 9) }
        do {
            try await cluster.complete("n0's dial of the future node ends", within: 10) { try await cluster[0].system.join(future.system.address) }
            Issue.record("a node of protocol 8 to 9 admitted n0")
        } catch {
            let text = "\(error)"
            #expect(text.contains("node n0 speaks protocol 3 to 7 and node future speaks 8 to 9"), "\(text)")
            #expect(text.contains("upgrade node future") == false && text.contains("upgrade node n0 to a release that speaks 8"), "\(text)")
        }
        // Beacons still lead to dials, and every dial is refused: it never becomes a member.
        try await cluster.holds("the future node stays out of the cluster", for: 2) {
            cluster.nodes.allSatisfy { node in !node.members.contains { $0.node.name == "future" && $0.state == .alive } }
                && future.members.allSatisfy { $0.state != .alive }
        }
        #expect(cluster.nodes.allSatisfy { $0.mayUse(protocolVersion: ProtocolVersions.current.highest) }, "a refused node holds nobody back")
    }

    @Test func aClientOutsideTheRangeIsToldWhatToUpgrade() async throws {
        let cluster = try SimulatedCluster(1)
        defer { cluster.stop() }
        let client = try cluster.client(named: "cli") { $0.protocolVersions = ProtocolVersions(lowest: 8, highest: 9) }
        do {
            try await cluster.complete("the client's dial ends", within: 10) { try await client.join(cluster[0].system.address) }
            Issue.record("a client of protocol 8 to 9 was admitted")
        } catch {
            let text = "\(error)"
            #expect(text.contains("this client (cli"), "\(text)")
            #expect(text.contains("speaks protocol 8 to 9 and node n0 speaks 3 to 7: upgrade node n0 to a release that speaks 8"), "\(text)")
        }
        // A client of the previous protocol is served, as 3.
        let older = try cluster.client(named: "older") { $0.protocolVersions = .only(3) }
        let peer = try await cluster.complete("the old client joins", within: 10) { try await older.join(cluster[0].system.address) }
        #expect(peer.protocolVersions == .current)
        #expect(older.protocolVersion(with: peer.node) == 3)
    }
}
