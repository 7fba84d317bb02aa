import FoundationEssentials
import Glibc

/// One IPv4 address of one network interface of this machine, as `getifaddrs` lists it.
public struct NetworkInterface: Sendable, Hashable {
    /// `eth0`, `enp3s0`, `lo`.
    public var name: String
    /// Dotted IPv4, e.g. `198.51.100.20`.
    public var address: String
    /// Dotted IPv4, e.g. `255.255.255.0`.
    public var netmask: String
    public var isUp: Bool
    public var isLoopback: Bool
    /// Whether the interface can broadcast (`IFF_BROADCAST`): a LAN, not a point-to-point link.
    public var canBroadcast: Bool

    public init(name: String, address: String, netmask: String, isUp: Bool = true, isLoopback: Bool = false, canBroadcast: Bool = true) {
        self.name = name
        self.address = address
        self.netmask = netmask
        self.isUp = isUp
        self.isLoopback = isLoopback
        self.canBroadcast = canBroadcast
    }

    /// The subnet's broadcast address (the address with every host bit set), or nil when
    /// the address or mask is not IPv4.
    public var broadcast: String? {
        guard let address = IPv4.parse(address), let mask = IPv4.parse(netmask) else { return nil }
        return IPv4.format(address | ~mask)
    }

    /// `198.51.100.0/24`.
    public var subnet: String? {
        guard let address = IPv4.parse(address), let mask = IPv4.parse(netmask) else { return nil }
        return "\(IPv4.format(address & mask))/\(mask.nonzeroBitCount)"
    }

    /// Whether this could carry a LAN cluster: up, not loopback, able to broadcast.
    public var isLAN: Bool { isUp && !isLoopback && canBroadcast && broadcast != nil }

    /// This machine's IPv4 interfaces now; empty when they cannot be listed.
    public static func current() -> [NetworkInterface] {
        var head: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&head) == 0 else { return [] }
        defer { freeifaddrs(head) }
        var found: [NetworkInterface] = []
        var cursor = head
        while let entry = cursor {
            cursor = entry.pointee.ifa_next
            guard let address = entry.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET),
                  let text = IPv4.text(of: address), let mask = IPv4.text(of: entry.pointee.ifa_netmask) else { continue }
            let flags = Int32(bitPattern: entry.pointee.ifa_flags)
            found.append(NetworkInterface(
                name: String(cString: entry.pointee.ifa_name), address: text, netmask: mask,
                isUp: flags & Int32(IFF_UP) != 0, isLoopback: flags & Int32(IFF_LOOPBACK) != 0,
                canBroadcast: flags & Int32(IFF_BROADCAST) != 0))
        }
        return found
    }
}

/// IPv4 addresses as host-order integers, for subnet arithmetic.
enum IPv4 {
    /// `198.51.100.20` as a host-order integer; nil when it is not four decimal octets.
    static func parse(_ text: String) -> UInt32? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var value: UInt32 = 0
        for part in parts {
            guard !part.isEmpty, part.count <= 3, part.allSatisfy({ $0.isASCII && $0.isNumber }), let octet = UInt32(part), octet <= 255 else { return nil }
            value = value << 8 | octet
        }
        return value
    }

    static func format(_ value: UInt32) -> String {
        [24, 16, 8, 0].map { String((value >> UInt32($0)) & 0xff) }.joined(separator: ".")
    }

    static func text(of address: UnsafeMutablePointer<sockaddr>?) -> String? {
        guard let address, address.pointee.sa_family == sa_family_t(AF_INET) else { return nil }
        let raw = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr.s_addr }
        return format(UInt32(bigEndian: raw))
    }
}

/// Which address and broadcast address a LAN node of this machine uses: pure, from the
/// interfaces listed (``NetworkInterface/current()``) and what the user said.
public enum LANAddress {
    /// What was chosen, and what else there was.
    public struct Choice: Sendable, Hashable {
        public var interface: NetworkInterface
        public var address: String { interface.address }
        public var broadcast: String
        /// The other LAN interfaces, which `--host` would choose instead.
        public var others: [NetworkInterface]
    }

    /// `host` when given (an address of a LAN interface of this machine, or any address
    /// but loopback when `broadcast` is given too), else the LAN interface first by name;
    /// its broadcast unless `broadcast` is given.
    /// Errors name `flag` (how the user gives a host) and list the addresses there are.
    public static func choose(among interfaces: [NetworkInterface], host: String?, broadcast: String?, flag: String = "--host") throws(UsageError) -> Choice {
        let lan = interfaces.filter(\.isLAN).sorted { ($0.name, $0.address) < ($1.name, $1.address) }
        let listed = lan.map { "\($0.address) (\($0.name))" }.joined(separator: ", ")
        if let broadcast, IPv4.parse(broadcast) == nil {
            throw UsageError("--broadcast must be an IPv4 address such as 198.51.100.255, got '\(broadcast)'")
        }
        let chosen: NetworkInterface
        if let host {
            guard IPv4.parse(host) != nil else { throw UsageError("\(flag) must be an IPv4 address of this machine, got '\(host)'") }
            if let loopback = interfaces.first(where: { $0.address == host && $0.isLoopback }) {
                throw UsageError("\(flag) \(host) is loopback (\(loopback.name)): a LAN cluster needs this machine's LAN address\(lan.isEmpty ? "" : ": \(listed)")")
            }
            if let broadcast, !lan.contains(where: { $0.address == host }) {
                // Both given and not one of the interfaces seen (a container, a NAT): as told.
                return Choice(interface: NetworkInterface(name: flag, address: host, netmask: ""), broadcast: broadcast, others: lan)
            }
            guard let match = lan.first(where: { $0.address == host }) else {
                throw UsageError("\(flag) \(host) is not an address of a LAN interface of this machine (up, able to broadcast): "
                                 + (lan.isEmpty ? "it has none" : "it has \(listed)"))
            }
            chosen = match
        } else {
            guard let first = lan.first else {
                throw UsageError("this machine has no LAN interface (up, not loopback, able to broadcast); on a LAN, give \(flag) ADDRESS and --broadcast ADDRESS")
            }
            chosen = first
        }
        return Choice(interface: chosen, broadcast: broadcast ?? chosen.broadcast!, others: lan.filter { $0 != chosen })
    }

    /// The LAN interface whose subnet's broadcast address is `broadcast`: where a node
    /// of the cluster whose beacons go there listens on this machine (`--host lan`).
    public static func matching(broadcast: String, among interfaces: [NetworkInterface], flag: String = "--host") throws(UsageError) -> NetworkInterface {
        let lan = interfaces.filter(\.isLAN).sorted { ($0.name, $0.address) < ($1.name, $1.address) }
        guard let match = lan.first(where: { $0.broadcast == broadcast }) else {
            let listed = lan.map { "\($0.address) (\($0.name), broadcast \($0.broadcast ?? "?"))" }.joined(separator: ", ")
            throw UsageError("\(flag) lan: no interface of this machine is on the LAN whose broadcast address is \(broadcast)"
                             + (lan.isEmpty ? "; it has no LAN interface" : "; it has \(listed)") + ". Give \(flag) ADDRESS")
        }
        return match
    }
}
