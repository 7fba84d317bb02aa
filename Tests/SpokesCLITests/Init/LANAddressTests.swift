import Testing
@testable import SpokesCLI

/// Which address and broadcast address a LAN node of a machine uses (pure: interfaces in).
/// The interfaces are values made up here, with RFC 5737 documentation addresses
/// (198.51.100/24, 203.0.113/24): `LANAddress.choose` only reads them, and
/// nothing in this suite opens a socket or sends anywhere.
@Suite struct LANAddressTests {
    static let loopback = NetworkInterface(name: "lo", address: "127.0.0.1", netmask: "255.0.0.0", isLoopback: true, canBroadcast: false)
    static let wired = NetworkInterface(name: "eth0", address: "198.51.100.20", netmask: "255.255.255.0")
    static let wifi = NetworkInterface(name: "wlan0", address: "203.0.113.3", netmask: "255.255.255.128")
    static let tunnel = NetworkInterface(name: "tun0", address: "198.51.100.66", netmask: "255.255.255.252", canBroadcast: false)
    static let down = NetworkInterface(name: "eth1", address: "203.0.113.9", netmask: "255.255.255.0", isUp: false)

    @Test func theBroadcastAddressIsTheAddressWithEveryHostBitSet() {
        #expect(Self.wired.broadcast == "198.51.100.255")
        #expect(Self.wired.subnet == "198.51.100.0/24")
        #expect(Self.wifi.broadcast == "203.0.113.127")
        #expect(NetworkInterface(name: "p", address: "203.0.113.5", netmask: "255.255.255.252").broadcast == "203.0.113.7")
        #expect(NetworkInterface(name: "x", address: "nonsense", netmask: "255.0.0.0").broadcast == nil)
    }

    @Test func withoutAHostTheFirstLANInterfaceByNameIsChosenAndTheOthersAreNamed() throws {
        let choice = try LANAddress.choose(among: [Self.loopback, Self.wifi, Self.tunnel, Self.down, Self.wired], host: nil, broadcast: nil)
        #expect(choice.address == "198.51.100.20" && choice.broadcast == "198.51.100.255")
        #expect(choice.interface.name == "eth0")
        #expect(choice.others == [Self.wifi], "loopback, a tunnel and an interface that is down are no LAN")
    }

    @Test func aHostOfThisMachineChoosesItsInterfaceAndABroadcastGivenWins() throws {
        let choice = try LANAddress.choose(among: [Self.wired, Self.wifi], host: "203.0.113.3", broadcast: nil)
        #expect(choice.interface == Self.wifi && choice.broadcast == "203.0.113.127")
        let told = try LANAddress.choose(among: [Self.wired], host: nil, broadcast: "198.51.100.127")
        #expect(told.broadcast == "198.51.100.127")
    }

    @Test func aHostNotOfThisMachineIsRefusedNamingTheFlagAndTheAddressesThereAre() {
        #expect(throws: UsageError("--host 203.0.113.1 is not an address of a LAN interface of this machine (up, able to broadcast): it has 198.51.100.20 (eth0)")) {
            try LANAddress.choose(among: [Self.loopback, Self.wired], host: "203.0.113.1", broadcast: nil)
        }
        #expect(throws: UsageError.self) { try LANAddress.choose(among: [Self.wired], host: "eth0", broadcast: nil) }
    }

    @Test func aHostAndABroadcastGivenTogetherAreTakenAsToldButNeverLoopback() throws {
        let told = try LANAddress.choose(among: [Self.wired], host: "203.0.113.1", broadcast: "203.0.113.255")
        #expect(told.address == "203.0.113.1" && told.broadcast == "203.0.113.255")
        #expect(throws: UsageError.self) { try LANAddress.choose(among: [Self.loopback, Self.wired], host: "127.0.0.1", broadcast: "127.255.255.255") }
    }

    @Test func noLANInterfaceIsAnErrorThatSaysWhatToGive() {
        do {
            _ = try LANAddress.choose(among: [Self.loopback, Self.tunnel], host: nil, broadcast: nil)
            Issue.record("chose an address on a machine without a LAN")
        } catch {
            #expect(error.message.contains("--host ADDRESS and --broadcast ADDRESS"))
        }
    }

    @Test func aBroadcastThatIsNotAnAddressIsRefusedNamingTheFlag() {
        #expect(throws: UsageError("--broadcast must be an IPv4 address such as 198.51.100.255, got '198.51.100'")) {
            try LANAddress.choose(among: [Self.wired], host: nil, broadcast: "198.51.100")
        }
    }

    @Test func theLANOfABroadcastAddressIsFoundOnAMachineWithSeveral() throws {
        #expect(try LANAddress.matching(broadcast: "203.0.113.127", among: [Self.loopback, Self.wired, Self.wifi]) == Self.wifi)
        #expect(try LANAddress.matching(broadcast: "198.51.100.255", among: [Self.wired, Self.wifi]) == Self.wired)
        do {
            _ = try LANAddress.matching(broadcast: "203.0.113.255", among: [Self.wired, Self.down], flag: "--dashboard-host")
            Issue.record("matched a LAN this machine is not on")
        } catch {
            #expect(error.message.hasPrefix("--dashboard-host lan: no interface of this machine is on the LAN whose broadcast address is 203.0.113.255"))
            #expect(error.message.contains("198.51.100.20 (eth0, broadcast 198.51.100.255)"))
        }
    }
}
