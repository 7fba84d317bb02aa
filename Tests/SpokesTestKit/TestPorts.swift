import Glibc

/// Ports for tests, from the kernel instead of a random guess.
public enum TestPorts {
    /// A UDP port free on 127.0.0.1 right now (bound to port 0, read, closed), for a
    /// test cluster's discovery: never one another running test holds, as a random
    /// guess could be.
    public static func discovery() -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        precondition(fd >= 0, "TestPorts: no UDP socket (errno \(errno))")
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        precondition(bound, "TestPorts: cannot bind a UDP socket on 127.0.0.1 (errno \(errno))")
        return UInt16(bigEndian: address.sin_port)
    }
}
