import FoundationEssentials
import Glibc
import SpokesConcurrency
import Synchronization

/// A listening TCP socket with its own accept thread: the real network's
/// (``SocketNetwork``), which hands it the real clock it pauses on.
public final class Listener: Sendable {
    public let address: SocketAddress
    private let fd: Int32
    private let clock: RealClock
    private let stopped = Atomic<Bool>(false)

    public init(address: SocketAddress, clock: RealClock) throws(TransportError) {
        (fd, self.address) = try Socket.listen(on: address)
        self.clock = clock
    }

    /// Accepts connections until `stop()`, handing each socket and peer address to `onAccept`.
    public func start(onAccept: @escaping @Sendable (Int32, SocketAddress) -> Void) {
        PlainThread.start(name: "spokes.listener") { [self] in
            while !stopped.load(ordering: .acquiring) {
                var peer = sockaddr_in()
                var length = socklen_t(MemoryLayout<sockaddr_in>.size)
                let client = withUnsafeMutablePointer(to: &peer) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(fd, $0, &length) }
                }
                if client < 0 {
                    if errno == EINTR || errno == ECONNABORTED || errno == EMFILE || errno == ENFILE {
                        // Out of descriptors: wait a moment for some to close (the
                        // connection stays in the backlog meanwhile).
                        if errno == EMFILE || errno == ENFILE { clock.pauseThread(for: 0.01) }
                        continue
                    }
                    break
                }
                _ = fcntl(client, F_SETFD, FD_CLOEXEC)
                Socket.configureStream(client)
                onAccept(client, SocketAddress(peer))
            }
            Glibc.close(fd)
        }
    }

    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        shutdown(fd, Int32(SHUT_RDWR))
    }
}
