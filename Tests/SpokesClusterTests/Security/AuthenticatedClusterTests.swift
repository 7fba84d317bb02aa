import SpokesClusterTestKit
import SpokesTestKit
import Distributed
import Foundation
import Testing
@testable import SpokesCluster

/// Systems with a secret, on a simulated network: who gets in, and what the refused side
/// is told.
@Suite(.simulated, .hangGuard)
struct AuthenticatedClusterTests {
    static let secret = try! ClusterSecret("authenticated-cluster-secret", source: "test")
    static let otherSecret = try! ClusterSecret("a-different-secret-entirely", source: "test")

    /// `node-0` with `first`, `node-1` with `second`, on a simulated network.
    func pair(_ first: ClusterSecret?, _ second: ClusterSecret?) throws -> (SimulatedCluster, [ClusterSystem]) {
        let cluster = try SimulatedCluster(0)
        let systems = try ClusterSystemTests.systems(2, on: cluster) { settings, index in settings.secret = index == 0 ? first : second }
        return (cluster, systems)
    }

    /// `node-1` joins `node-0`, in virtual time.
    func join(_ cluster: SimulatedCluster, _ systems: [ClusterSystem]) async throws -> WireMessage.Handshake {
        try await cluster.complete("node-1 joins node-0", within: 10) { try await systems[1].join(systems[0].address) }
    }

    @Test func membersWithTheSameSecretCallEachOther() async throws {
        let (cluster, systems) = try pair(Self.secret, Self.secret)
        defer { cluster.stop() }
        let host = systems[0]
        cluster.keep(ClusterSystem.withWellKnownName("greeter") { Greeter(actorSystem: host) })
        let welcome = try await join(cluster, systems)
        #expect(welcome.authenticated)
        let remote = try Greeter.resolve(id: ActorID(node: host.node, name: "greeter"), using: systems[1])
        let greetings = try await cluster.complete("50 greetings", within: 10) {
            var greetings: [String] = []
            for index in 0..<50 { greetings.append(try await remote.greet("\(index)")) }
            return greetings
        }
        #expect(greetings == (0..<50).map { "hello \($0) from node-0" })
        #expect(try await cluster.complete("an echo", within: 10) { try await remote.echo([1, 2, 3]) } == [1, 2, 3])
        #expect(host.rejections.total == 0)
        #expect(systems[1].rejections.total == 0)
    }

    @Test func aWrongSecretIsToldTheSecretsDifferAndNeverRegisters() async throws {
        let (cluster, systems) = try pair(Self.secret, Self.otherSecret)
        defer { cluster.stop() }
        do {
            _ = try await join(cluster, systems)
            Issue.record("joined with the wrong secret")
        } catch {
            let message = String(describing: error)
            #expect(message.contains(Connection.differentSecretsRefusal), "\(message)")
            #expect(!message.contains("authenticated-cluster-secret") && !message.contains("a-different-secret"))
        }
        #expect(systems[0].connectedPeers.isEmpty)
        #expect(systems[1].connectedPeers.isEmpty)
        #expect(systems[0].rejections[.authenticationFailed] == 1, "the node whose secret the hello did not open counts it")
    }

    @Test(arguments: [(true, false), (false, true)])
    func nodesWithAndWithoutASecretRefuseEachOther(acceptorHasSecret: Bool, dialerHasSecret: Bool) async throws {
        let (cluster, systems) = try pair(acceptorHasSecret ? Self.secret : nil, dialerHasSecret ? Self.secret : nil)
        defer { cluster.stop() }
        await #expect(throws: RemoteCallError.self) { _ = try await join(cluster, systems) }
        try await cluster.run(until: "node-0 counts the refusal", within: 1) { systems[0].rejections[.handshakeRefused] > 0 }
        #expect(systems[0].rejections[.handshakeRefused] == 1)
        #expect(systems[0].connectedPeers.isEmpty)
    }

    @Test func openNodesStillTalkWithoutASecret() async throws {
        let (cluster, systems) = try pair(nil, nil)
        defer { cluster.stop() }
        let welcome = try await join(cluster, systems)
        #expect(!welcome.authenticated)
    }
}
