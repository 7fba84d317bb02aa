import SpokesTestKit
import Distributed
import Foundation
import Testing
@testable import SpokesCluster

/// Nodes with a secret, in process: who gets in, and what the refused side is told.
@Suite(.processLane, .timeLimit(.minutes(1)))
struct AuthenticatedClusterTests {
    static let secret = try! ClusterSecret("authenticated-cluster-secret", source: "test")
    static let otherSecret = try! ClusterSecret("a-different-secret-entirely", source: "test")

    func pair(_ first: ClusterSecret?, _ second: ClusterSecret?) throws -> TestSystems {
        try TestSystems(2) { settings, index in settings.secret = index == 0 ? first : second }
    }

    @Test func membersWithTheSameSecretCallEachOther() async throws {
        let cluster = try pair(Self.secret, Self.secret)
        defer { cluster.shutdown() }
        let host = cluster.systems[0]
        cluster.keep(ClusterSystem.withWellKnownName("greeter") { Greeter(actorSystem: host) })
        let welcome = try await cluster.systems[1].join(host.address)
        #expect(welcome.authenticated)
        let remote = try Greeter.resolve(id: ActorID(node: host.node, name: "greeter"), using: cluster.systems[1])
        for index in 0..<50 { #expect(try await remote.greet("\(index)") == "hello \(index) from node-0") }
        #expect(try await remote.echo([1, 2, 3]) == [1, 2, 3])
        #expect(host.rejections.total == 0)
        #expect(cluster.systems[1].rejections.total == 0)
    }

    @Test func aWrongSecretIsToldTheSecretsDifferAndNeverRegisters() async throws {
        let cluster = try pair(Self.secret, Self.otherSecret)
        defer { cluster.shutdown() }
        do {
            try await cluster.systems[1].join(cluster.systems[0].address)
            Issue.record("joined with the wrong secret")
        } catch {
            let message = String(describing: error)
            #expect(message.contains(Connection.differentSecretsRefusal), "\(message)")
            #expect(!message.contains("authenticated-cluster-secret") && !message.contains("a-different-secret"))
        }
        #expect(cluster.systems[0].connectedPeers.isEmpty)
        #expect(cluster.systems[1].connectedPeers.isEmpty)
        #expect(cluster.systems[0].rejections[.authenticationFailed] == 1, "the node whose secret the hello did not open counts it")
    }

    @Test(arguments: [(true, false), (false, true)])
    func nodesWithAndWithoutASecretRefuseEachOther(acceptorHasSecret: Bool, dialerHasSecret: Bool) async throws {
        let cluster = try pair(acceptorHasSecret ? Self.secret : nil, dialerHasSecret ? Self.secret : nil)
        defer { cluster.shutdown() }
        await #expect(throws: RemoteCallError.self) { try await cluster.systems[1].join(cluster.systems[0].address) }
        #expect(cluster.systems[0].rejections[.handshakeRefused] == 1)
        #expect(cluster.systems[0].connectedPeers.isEmpty)
    }

    @Test func openNodesStillTalkWithoutASecret() async throws {
        let cluster = try pair(nil, nil)
        defer { cluster.shutdown() }
        let welcome = try await cluster.systems[1].join(cluster.systems[0].address)
        #expect(!welcome.authenticated)
    }
}
