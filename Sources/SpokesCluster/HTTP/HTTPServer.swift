import Foundation
import Synchronization

/// A small HTTP/1.1 server for the dashboard: a page, a JSON API and Server-Sent Events.
///
/// Threads, so that no socket call ever blocks the Swift cooperative pool:
/// - one accept thread (``Listener``); a connection over the caps is answered `503` and
///   closed right there, with non-blocking calls, so no thread is started for it;
/// - one thread per admitted connection (at most `maxConnections`), which reads with
///   `poll` to enforce `headerTimeout` and `idleTimeout`, parses with
///   ``HTTPRequestParser``, runs the async handler in a `Task` while it waits on a
///   semaphore, and writes with non-blocking `send` and `poll` under `writeTimeout`;
/// - an event stream is written by its connection's thread, which polls the client socket
///   (to notice it leaving) and a wake-up socket the producer writes to.
///
/// Every limit is in ``HTTPLimits``. ``stop()`` never blocks; ``shutdown()`` also waits
/// until every connection has closed.
public final class HTTPServer: Sendable {
    /// The address bound, with the port chosen when `port` was 0.
    public let address: SocketAddress
    public let limits: HTTPLimits
    let handler: @Sendable (HTTPRequest) async -> HTTPResponse
    private let listener: Listener
    private let started = Atomic<Bool>(false)
    private let state = Mutex(State())

    private struct State {
        var stopped = false
        var nextID = 0
        var connections: [Int: HTTPServerConnection] = [:]
        var connectionsPerHost: [String: Int] = [:]
        var streams = 0
        var refusals: [HTTPRefusal: Int] = [:]
        var closeWaiters: [CheckedContinuation<Void, Never>] = []
    }

    /// Binds `host:port` (an IPv4 address; port 0 picks a free port). Call ``start()``
    /// to accept connections. Throws when the host is not an IPv4 address or the port
    /// cannot be bound.
    public init(host: String, port: UInt16, limits: HTTPLimits = HTTPLimits(),
                handler: @escaping @Sendable (HTTPRequest) async -> HTTPResponse) throws(TransportError) {
        guard SocketAddress.ipv4(host) != nil else {
            throw .invalidAddress("\(host):\(port)", reason: "'\(host)' is not an IPv4 address")
        }
        listener = try Listener(address: SocketAddress(host: host, port: port))
        address = listener.address
        self.limits = limits
        self.handler = handler
    }

    deinit {
        stop()
    }

    /// Starts accepting connections. Idempotent.
    public func start() {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        listener.start { [weak self] descriptor, peer in
            guard let self else {
                close(descriptor)
                return
            }
            admit(descriptor, from: peer)
        }
    }

    /// Stops accepting, closes every connection and ends every event stream (their
    /// `onTermination` runs on their connections' threads). Returns at once; handlers
    /// still running are cancelled and no longer waited for. Idempotent.
    public func stop() {
        let connections: [HTTPServerConnection] = state.withLock { state in
            guard !state.stopped else { return [] }
            state.stopped = true
            // Under the lock: a connection closes its descriptor only after leaving
            // `connections` under this lock, so none of these is closed or reused yet.
            for connection in state.connections.values { Glibc.shutdown(connection.descriptor, Int32(SHUT_RDWR)) }
            return Array(state.connections.values)
        }
        listener.stop()
        if !started.exchange(true, ordering: .acquiringAndReleasing) {
            // Never started: the accept thread sees the stop at once and closes the socket.
            listener.start { descriptor, _ in close(descriptor) }
        }
        for connection in connections { connection.abort() }
    }

    /// Stops (see ``stop()``), then returns once every connection has closed and every
    /// event stream's `onTermination` has run. Not from a handler: it would wait for the
    /// handler's own connection.
    public func shutdown() async {
        stop()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let closed = state.withLock { state in
                if state.connections.isEmpty { return true }
                state.closeWaiters.append(continuation)
                return false
            }
            if closed { continuation.resume() }
        }
    }

    /// Connections open now, including ones streaming events.
    public var openConnectionCount: Int { state.withLock { $0.connections.count } }

    /// Event streams open now.
    public var openStreamCount: Int { state.withLock { $0.streams } }

    /// How many times the server refused something, by ``HTTPRefusal`` raw value
    /// (`too_many_connections`, `request_timeout`, ...); reasons never seen are absent.
    public var refusals: [String: Int] {
        state.withLock { state in
            Dictionary(uniqueKeysWithValues: state.refusals.map { ($0.key.rawValue, $0.value) })
        }
    }

    var isStopped: Bool { state.withLock { $0.stopped } }

    func count(_ refusal: HTTPRefusal) {
        state.withLock { $0.refusals[refusal, default: 0] += 1 }
    }

    /// On the accept thread: starts a connection's thread, or answers `503` over the caps.
    private func admit(_ descriptor: Int32, from peer: SocketAddress) {
        enum Admission {
            case admitted(HTTPServerConnection)
            case refused(HTTPRefusal)
            case stopped
        }
        let admission: Admission = state.withLock { state in
            if state.stopped { return .stopped }
            if state.connections.count >= limits.maxConnections {
                state.refusals[.tooManyConnections, default: 0] += 1
                return .refused(.tooManyConnections)
            }
            if state.connectionsPerHost[peer.host, default: 0] >= limits.maxConnectionsPerAddress {
                state.refusals[.tooManyConnectionsFromAddress, default: 0] += 1
                return .refused(.tooManyConnectionsFromAddress)
            }
            state.nextID += 1
            let connection = HTTPServerConnection(id: state.nextID, descriptor: descriptor, remoteAddress: peer)
            state.connections[connection.id] = connection
            state.connectionsPerHost[peer.host, default: 0] += 1
            return .admitted(connection)
        }
        switch admission {
        case .admitted(let connection):
            connection.start(server: self)
        case .refused(let refusal):
            Self.refuse(descriptor, because: refusal)
        case .stopped:
            close(descriptor)
        }
    }

    /// Answers `503` and closes, without blocking the accept thread: a new socket's send
    /// buffer always has room for this short answer. What the client already sent is read
    /// first, so the close does not turn into a reset that could destroy the answer.
    private static func refuse(_ descriptor: Int32, because refusal: HTTPRefusal) {
        let reason = refusal == .tooManyConnections ? "too many connections" : "too many connections from your address"
        var response = HTTPResponse.text("503 Service Unavailable: \(reason); try again shortly\n", status: .serviceUnavailable)
        response.headers.add(name: "Retry-After", value: "1")
        var scratch = [UInt8](repeating: 0, count: 4096)
        for _ in 0..<16 where scratch.withUnsafeMutableBytes({ recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }) > 0 {}
        let bytes = response.serialized(for: nil, keepAlive: false, date: Date())
        _ = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL)) }
        Glibc.shutdown(descriptor, Int32(SHUT_WR))
        close(descriptor)
    }

    /// Admits one more event stream, unless `maxStreams` are open or the server stopped.
    func admitStream() -> Bool {
        state.withLock { state in
            guard !state.stopped else { return false }
            guard state.streams < limits.maxStreams else {
                state.refusals[.tooManyStreams, default: 0] += 1
                return false
            }
            state.streams += 1
            return true
        }
    }

    func streamEnded() {
        state.withLock { $0.streams -= 1 }
    }

    /// Forgets `connection` and closes its descriptor (in that order: see ``stop()``),
    /// then wakes ``shutdown()`` callers once none is left.
    func release(_ connection: HTTPServerConnection) {
        let waiters: [CheckedContinuation<Void, Never>] = state.withLock { state in
            state.connections[connection.id] = nil
            let host = connection.remoteAddress.host
            state.connectionsPerHost[host, default: 1] -= 1
            if state.connectionsPerHost[host] == 0 { state.connectionsPerHost[host] = nil }
            guard state.connections.isEmpty else { return [] }
            defer { state.closeWaiters = [] }
            return state.closeWaiters
        }
        close(connection.descriptor)
        for waiter in waiters { waiter.resume() }
    }
}
