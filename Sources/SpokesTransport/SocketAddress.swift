import Glibc

/// An IPv4 address and port, parsed from and printed as `host:port`.
public struct SocketAddress: Sendable, Hashable, CustomStringConvertible, Codable {
    public let host: String
    public let port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses `host:port`, where host is a dotted IPv4 address or `localhost`.
    public init(parsing text: String) throws(TransportError) {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else {
            throw .invalidAddress(text, reason: "expected host:port with a port from 0 to 65535")
        }
        let host = String(text[..<colon])
        guard Self.ipv4(host) != nil else {
            throw .invalidAddress(text, reason: "'\(host)' is not an IPv4 address")
        }
        self.init(host: host, port: port)
    }

    public var description: String { "\(host):\(port)" }

    /// The address in network byte order, or nil when `host` is not IPv4.
    public static func ipv4(_ host: String) -> in_addr_t? {
        let name = host == "localhost" ? "127.0.0.1" : host
        var address = in_addr()
        guard inet_pton(AF_INET, name, &address) == 1 else { return nil }
        return address.s_addr
    }

    /// True for 127.0.0.0/8.
    public var isLoopback: Bool {
        guard let address = Self.ipv4(host) else { return false }
        return UInt32(bigEndian: address) >> 24 == 127
    }

    public var sockaddr: sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = Self.ipv4(host) ?? 0
        return address
    }

    public init(_ address: sockaddr_in) {
        var copy = address.sin_addr
        var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        inet_ntop(AF_INET, &copy, &text, socklen_t(text.count))
        self.init(host: String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self),
                  port: UInt16(bigEndian: address.sin_port))
    }

    /// Whether a TCP listener could bind this address now (a moment later it may differ).
    public var isFreeToListen: Bool {
        guard let (fd, _) = try? Socket.listen(on: self, backlog: 1) else { return false }
        close(fd)
        return true
    }
}
