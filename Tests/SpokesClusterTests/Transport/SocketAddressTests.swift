import Glibc
import Testing
@testable import SpokesCluster

@Suite struct SocketAddressTests {
    @Test func parsesAndPrintsHostAndPort() throws {
        let address = try SocketAddress(parsing: "127.0.0.1:7000")
        #expect(address.host == "127.0.0.1" && address.port == 7000)
        #expect(address.description == "127.0.0.1:7000")
        #expect(address.isLoopback)
        #expect(!SocketAddress(host: "192.0.2.1", port: 1).isLoopback)
    }

    @Test func aPortSomeoneListensOnIsNotFreeAndIsOnceClosed() throws {
        let (fd, bound) = try Socket.listen(on: SocketAddress(host: "127.0.0.1", port: 0))
        #expect(!bound.isFreeToListen, "a listener holds \(bound)")
        close(fd)
        #expect(bound.isFreeToListen)
    }
}
