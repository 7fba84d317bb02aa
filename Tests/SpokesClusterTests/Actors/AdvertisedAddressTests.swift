import SpokesConcurrency
import SpokesTestKit
import Testing
@testable import SpokesCluster

/// Issue 30 §2: a node behind NAT or in a container announces the address others reach
/// it at, apart from the one it binds.
@Suite struct AdvertisedAddressTests {
    let network = SimulatedNetwork(clock: VirtualClock())

    /// A node at `host`:7000 of the simulated network, announcing `advertise`.
    func system(_ host: String = "127.0.0.2", advertise: String) throws -> ClusterSystem {
        var settings = ClusterSettings()
        settings.host = host
        settings.port = 7000
        settings.advertise = advertise
        return try ClusterSystem(settings: settings, runtime: Runtime.virtual(VirtualClock(), network: network.host(host)))
    }

    @Test func aNodeAnnouncesItsAdvertisedAddressAndListensWhereItBinds() throws {
        let advertised = try system(advertise: "203.0.113.5:17000")
        defer { advertised.shutdown() }
        #expect(advertised.address == SocketAddress(host: "127.0.0.2", port: 7000))
        #expect(advertised.handshake().address == "203.0.113.5:17000", "handshakes and beacons say where to reach it")
        let plain = try system("127.0.0.3", advertise: "")
        defer { plain.shutdown() }
        #expect(plain.handshake().address == "127.0.0.3:7000")
    }

    @Test func anAdvertisedAddressThatIsNotHostAndPortIsRefusedNamingTheSetting() {
        #expect {
            _ = try system(advertise: "somewhere")
        } throws: { error in
            "\(error)".contains("node.advertise (--advertise) must be HOST:PORT")
        }
    }
}
