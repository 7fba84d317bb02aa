import Glibc
import Synchronization

/// Ports for tests, from the kernel instead of a random guess.
public enum TestPorts {
    /// Every port handed out in this process: the kernel may give a port again once the
    /// probe socket is closed, before the test that got it binds it (or after its nodes
    /// stopped while a client of that test still listens), and two tests' clusters on one
    /// discovery port hear each other.
    private static let handedOut = Mutex<Set<UInt16>>([])

    /// A UDP port free on 127.0.0.1 right now (bound to port 0, read, closed) and never
    /// handed out before in this process, for a test cluster's discovery: never one
    /// another running test holds, as a random guess could be.
    public static func discovery() -> UInt16 {
        for _ in 0..<1_000 {
            let port = kernelPort()
            if handedOut.withLock({ $0.insert(port).inserted }) { return port }
        }
        preconditionFailure("TestPorts: the kernel gave only ports handed out before, 1,000 times")
    }

    private static func kernelPort() -> UInt16 {
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
