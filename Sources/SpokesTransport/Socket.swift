import Glibc
import SpokesConcurrency

/// Thin, blocking wrappers over the POSIX socket calls the transport needs. They block
/// the calling thread, so they run only on the transport's own threads and queues,
/// never on the Swift cooperative pool.
public enum Socket {
    /// A TCP socket listening on `address` (port 0 picks a free one); returns it and the
    /// address actually bound.
    public static func listen(on address: SocketAddress, backlog: Int32 = 128) throws(TransportError) -> (Int32, SocketAddress) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .socketFailed(operation: "socket for", address: address.description, errno: errno) }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var local = address.sockaddr
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, Glibc.listen(fd, backlog) == 0 else {
            let code = errno
            close(fd)
            throw .socketFailed(operation: "listen on", address: address.description, errno: code)
        }
        return (fd, localAddress(of: fd) ?? address)
    }

    /// Connects to `address`, giving up after `timeout` seconds.
    public static func connect(to address: SocketAddress, timeout: Double) throws(TransportError) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw .socketFailed(operation: "socket for", address: address.description, errno: errno) }
        var remote = address.sockaddr
        let result = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if result != 0 {
            guard errno == EINPROGRESS else {
                let code = errno
                close(fd)
                throw .socketFailed(operation: "connect to", address: address.description, errno: code)
            }
            var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&poller, 1, max(1, Duration.clamped(seconds: timeout).pollMilliseconds))
            if ready <= 0 {
                close(fd)
                throw .connectTimedOut(address: address.description)
            }
            var code: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length)
            if code != 0 {
                close(fd)
                throw .socketFailed(operation: "connect to", address: address.description, errno: code)
            }
        }
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags & ~Int32(O_NONBLOCK))
        configureStream(fd)
        return fd
    }

    /// Low latency for small frames.
    public static func configureStream(_ fd: Int32) {
        var yes: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Writes all of `bytes`; false when the connection is gone.
    public static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { buffer in
                send(fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += sent
        }
        return true
    }

    /// Writes what the socket's buffer takes of `bytes` now (`MSG_DONTWAIT`): the count
    /// written, or nil when the connection is gone. Never blocks.
    public static func sendWithoutWaiting(_ fd: Int32, _ bytes: [UInt8]) -> Int? {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { buffer in
                send(fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if sent < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { return offset }
                return nil
            }
            offset += sent
        }
        return offset
    }

    public static func localAddress(of fd: Int32) -> SocketAddress? {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return result == 0 ? SocketAddress(address) : nil
    }

    public static func peerAddress(of fd: Int32) -> SocketAddress? {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        return result == 0 ? SocketAddress(address) : nil
    }
}
