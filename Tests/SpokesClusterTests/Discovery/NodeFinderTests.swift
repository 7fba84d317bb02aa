import Foundation
import SpokesTestKit
import Testing
@testable import SpokesCluster

/// What a client says when discovery finds no node it can talk to.
@Suite(.processLane) struct NodeFinderTests {
    func settings(secret: Bool) throws -> ClusterSettings {
        var settings = ClusterSettings()
        settings.cluster = "lab"
        settings.discoveryPort = 7000
        if secret { settings.secret = try ClusterSecret(ClusterSecret.generateText(), source: "test") }
        return settings
    }

    @Test func silenceIsSilence() throws {
        let failure = NodeFinder.failure(heard: [], settings: try settings(secret: false), seconds: 3)
        #expect(failure.description == "no node of cluster 'lab' was heard on discovery port 7000 within 3 s; start one with 'spokes node', or give --to HOST:PORT")
    }

    @Test func nodesOfThisClusterWithAnotherSecretOrNoneAreNamed() throws {
        let signed = [HeardBeacon(cluster: "lab", node: "a", signed: true), HeardBeacon(cluster: "lab", node: "b", signed: true)]
        let heard = "nodes of cluster 'lab' were heard on discovery port 7000 (a, b), but"
        #expect(NodeFinder.failure(heard: signed, settings: try settings(secret: true), seconds: 3).description
                == "\(heard) they hold another secret than this client: give this client the cluster's secret (SPOKES_SECRET or secret_file)")
        #expect(NodeFinder.failure(heard: signed, settings: try settings(secret: false), seconds: 3).description.hasPrefix(
            "\(heard) they hold a cluster secret and this client has none"))
        let open = signed.map { HeardBeacon(cluster: $0.cluster, node: $0.node, signed: false) }
        #expect(NodeFinder.failure(heard: open, settings: try settings(secret: true), seconds: 3).description.hasPrefix(
            "\(heard) they run without a secret and this client has one"))
    }

    @Test func nodesOfOtherClustersAreNamedWithTheirCluster() throws {
        let heard = [HeardBeacon(cluster: "home", node: "h1", signed: false)]
        #expect(NodeFinder.failure(heard: heard, settings: try settings(secret: false), seconds: 0.5).description
                == "no node of cluster 'lab' was heard on discovery port 7000 within 0.5 s, only nodes of cluster 'home' (h1); give --cluster home, or --to HOST:PORT")
    }

    @Test func aStrangersBeaconIsReadWithoutTrustAndItsNamesAreCut() throws {
        let source = SocketAddress(host: "192.0.2.7", port: 7001)
        var beacon = WireMessage.Handshake(cluster: "lab\u{1B}[31m", node: NodeID(name: String(repeating: "n", count: 100), incarnation: 1),
                                           address: "127.0.0.1:1", slots: 1, authenticated: true, nonce: "")
        let sealed = BeaconAuthenticator(secret: try ClusterSecret(ClusterSecret.generateText(), source: "them")).seal(beacon, now: 0)
        let heard = try #require(BeaconAuthenticator.peek(sealed, source: source))
        #expect(heard == HeardBeacon(cluster: "lab[31m", node: "a node at 192.0.2.7", signed: true),
                "a sealed beacon shows its cluster, and its node only by the address it came from")
        // Quoted or dotted: base64 has neither, so only the beacon in clear could hold them.
        #expect(!sealed.contains(subsequence: Array("\"nnnn".utf8)) && !sealed.contains(subsequence: Array("127.0.0.1:1".utf8)),
                "a sealed beacon's node and address are not readable")
        beacon.authenticated = false
        let open = try #require(BeaconAuthenticator.peek(BeaconAuthenticator(secret: nil).seal(beacon, now: 0), source: source))
        #expect(open == HeardBeacon(cluster: "lab[31m", node: String(repeating: "n", count: 40), signed: false))
        #expect(BeaconAuthenticator.peek(Array("not a beacon".utf8), source: source) == nil)
        beacon.address = ""
        #expect(BeaconAuthenticator.peek(BeaconAuthenticator(secret: nil).seal(beacon, now: 0), source: source) == nil, "a client's query is no node")
    }

    /// Nodes beacon only every 60 s here: once both have started (and sent their first
    /// beacon), a client finds one in time only because its query is answered at once.
    @Test(.hangGuard) func aClientsQueryAndANewcomerAreAnsweredAtOnce() async throws {
        var settings = ClusterSettings()
        settings.cluster = "answer-\(UUID())"
        settings.discoveryPort = TestPorts.discovery()
        settings.discoveryInterval = 60
        settings.nodeName = "a0"
        let first = try ClusterNode(settings: settings)
        first.start()
        defer { first.stop() }
        settings.nodeName = "a1"
        let second = try ClusterNode(settings: settings)
        second.start()
        defer { second.stop() }
        try await ClusterNodeTests.waitUntil(second, seconds: 10, "seeing a0") { $0.contains { $0.node.name == "a0" && $0.state == .alive } }
        let found = try await NodeFinder.firstNode(settings: settings, timeout: 10)
        #expect([first.system.address, second.system.address].contains(found))
    }
}
