import Foundation
import SpokesTestKit
import Synchronization
import Testing
@testable import SpokesCluster

/// The probe socket on loopback: sealed probes arrive with the address they came from,
/// and datagrams that are not this cluster's probes are counted and dropped.
@Suite(.processLane, .timeLimit(.minutes(1)))
struct ProbeChannelTests {
    /// A channel on a free loopback UDP port.
    func channel(secret: ClusterSecret?, rejections: RejectionCounters = RejectionCounters()) throws -> (ProbeChannel, SocketAddress) {
        let address = SocketAddress(host: "127.0.0.1", port: TestPorts.discovery())
        return (try ProbeChannel(address: address, keyring: secret.map { KeyringStore(Keyring(primary: $0)) }, rejections: rejections, network: SocketNetwork()), address)
    }

    @Test func aProbeArrivesWithTheAddressItCameFromAndForgeriesAreCounted() async throws {
        let secret = try ClusterSecret(String(repeating: "s", count: 32), source: "test")
        let rejections = RejectionCounters()
        let (receiver, receiverAddress) = try channel(secret: secret, rejections: rejections)
        let (sender, senderAddress) = try channel(secret: secret)
        let got = Mutex<[(Prober.Message, String)]>([])
        receiver.start { message, from in got.withLock { $0.append((message, from)) } }
        defer { receiver.stop(); sender.stop() }
        let ping = Prober.Message.ping(nonce: 5, from: NodeID(name: "s", incarnation: 1))
        try await eventually("the ping arrives") {
            sender.send(ping, to: receiverAddress.description)
            return !got.withLock(\.isEmpty)
        }
        let arrived = got.withLock { $0.first }
        let first = try #require(arrived)
        #expect(first.0 == ping && first.1 == senderAddress.description)
        let (open, _) = try channel(secret: nil)
        defer { open.stop() }
        try await eventually("an unsealed probe is counted as unauthenticated") {
            open.send(ping, to: receiverAddress.description)
            return rejections[.unauthenticatedProbe] > 0
        }
        #expect(got.withLock { $0.count(where: { $0.1 != senderAddress.description }) } == 0, "nothing else was taken")
    }
}
