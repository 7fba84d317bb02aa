import FoundationEssentials
import Glibc
import SpokesConcurrency
import Synchronization

/// The machine's network: TCP and UDP sockets, all read by one thread of their own
/// (``SocketReactor``; ``RuntimeNetwork``'s callbacks never run on the cooperative pool
/// here).
public struct SocketNetwork: RuntimeNetwork {
    /// The clock a listener's accept thread pauses on while the process has no
    /// descriptor left: the real runtime's.
    private let clock: RealClock

    public init(clock: RealClock = RealClock()) {
        self.clock = clock
    }

    public func listen(on address: SocketAddress) throws(TransportError) -> any StreamListener {
        SocketStreamListener(try Listener(address: address, clock: clock))
    }

    public func connect(to address: SocketAddress, timeout: Double) async throws -> any ByteStream {
        try await runBlocking("spokes.connect") {
            SocketStream(fd: try Socket.connect(to: address, timeout: timeout), remoteAddress: address)
        }
    }

    public func bindDatagrams(on address: SocketAddress, shared: Bool) throws(TransportError) -> any DatagramPort {
        try SocketDatagramPort(address: address, shared: shared)
    }
}

/// A ``Listener`` handing out ``SocketStream``s.
private struct SocketStreamListener: StreamListener {
    let listener: Listener

    init(_ listener: Listener) { self.listener = listener }

    var address: SocketAddress { listener.address }

    func start(onAccept: @escaping @Sendable (any ByteStream) -> Void) {
        listener.start { fd, remote in onAccept(SocketStream(fd: fd, remoteAddress: remote)) }
    }

    func stop() { listener.stop() }
}

/// A connected TCP socket, read by the process's ``SocketReactor``.
public final class SocketStream: ByteStream {
    public let remoteAddress: SocketAddress
    public var writesWait: Bool { true }
    private let fd: Int32
    /// Whether reading started, whether the reactor still watches the socket, and
    /// whether it was closed: a watched socket is closed on the reactor's thread.
    private let state = Mutex((reading: false, watched: false, closed: false))

    public init(fd: Int32, remoteAddress: SocketAddress) {
        self.fd = fd
        self.remoteAddress = remoteAddress
    }

    /// Reads on the reactor's thread (at most ``SocketReactor/bufferSize`` bytes a
    /// round); `onBytes` and `onEnd` run there and must not block.
    public func startReading(onBytes: @escaping @Sendable (ArraySlice<UInt8>) -> Bool, onEnd: @escaping @Sendable (StreamEnd) -> Void) {
        let starts = state.withLock { state in
            guard !state.reading, !state.closed else { return false }
            state.reading = true
            state.watched = true
            return true
        }
        guard starts else { return }
        SocketReactor.shared.watch(fd) { [self, fd] buffer in
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                let end: StreamEnd
                if count > 0 {
                    guard !onBytes(buffer[..<count]) else { return nil }
                    end = .stopped
                } else if count == 0 {
                    end = .closed
                } else {
                    let code = errno
                    if code == EINTR { continue }
                    if code == EAGAIN || code == EWOULDBLOCK { return nil }
                    end = .failed(String(cString: strerror(code)))
                }
                return { [self] in
                    state.withLock { $0.watched = false }
                    onEnd(end)
                }
            }
        }
    }

    public func write(_ bytes: [UInt8]) -> Bool {
        Socket.sendAll(fd, bytes)
    }

    public func writeWithoutWaiting(_ bytes: [UInt8]) -> Int? {
        Socket.sendWithoutWaiting(fd, bytes)
    }

    public func shutdown() {
        Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }

    public func shutdownWriting() {
        Glibc.shutdown(fd, Int32(SHUT_WR))
    }

    public func limitWriteBuffer(toBytes bytes: Int) {
        var size = Int32(clamping: bytes)
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    public func close() {
        let watched = state.withLock { state -> Bool? in
            guard !state.closed else { return nil }
            state.closed = true
            return state.watched
        }
        guard let watched else { return }
        SocketReactor.shared.close(fd, watched: watched)
    }
}

/// A bound UDP socket, read by the process's ``SocketReactor``.
final class SocketDatagramPort: DatagramPort {
    let address: SocketAddress
    private let fd: Int32
    /// Whether `stop()` was called, and whether the reactor watches the socket (and
    /// closes it once it no longer does).
    private let state = Mutex((stopped: false, receiving: false))
    private var stopped: Bool { state.withLock { $0.stopped } }

    /// Binds `address`; `shared` lets other sockets of this machine bind it too
    /// (SO_REUSEADDR, SO_REUSEPORT) and allows broadcasts (SO_BROADCAST).
    init(address: SocketAddress, shared: Bool) throws(TransportError) {
        self.address = address
        fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .socketFailed(operation: "udp socket for", address: address.description, errno: errno) }
        if shared {
            var yes: Int32 = 1
            for option in [SO_REUSEADDR, SO_REUSEPORT, SO_BROADCAST] {
                setsockopt(fd, SOL_SOCKET, option, &yes, socklen_t(MemoryLayout<Int32>.size))
            }
        }
        var local = address.sockaddr
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            let code = errno
            Glibc.close(fd)
            throw .socketFailed(operation: "bind udp port", address: address.description, errno: code)
        }
    }

    func send(_ bytes: [UInt8], to destination: SocketAddress) {
        guard !stopped else { return }
        var target = destination.sockaddr
        _ = bytes.withUnsafeBytes { buffer in
            withUnsafePointer(to: &target) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT), $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
    }

    func startReceiving(maximumSize: Int, onDatagram: @escaping @Sendable (ArraySlice<UInt8>, SocketAddress) -> Void) {
        let starts = state.withLock { state in
            guard !state.stopped, !state.receiving else { return false }
            state.receiving = true
            return true
        }
        guard starts else { return }
        SocketReactor.shared.watch(fd) { [fd] buffer in
            var source = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            // One byte beyond the largest: a datagram that fills it is too large.
            let count = buffer.withUnsafeMutableBytes { bytes in
                withUnsafeMutablePointer(to: &source) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        recvfrom(fd, bytes.baseAddress, min(bytes.count, maximumSize + 1), Int32(MSG_DONTWAIT), $0, &length)
                    }
                }
            }
            if count > 0 { onDatagram(buffer[..<count], SocketAddress(source)) }
            return nil
        }
    }

    func stop() {
        let (stops, watched) = state.withLock { state in
            defer { state.stopped = true }
            return (!state.stopped, state.receiving)
        }
        guard stops else { return }
        SocketReactor.shared.close(fd, watched: watched)
    }
}
