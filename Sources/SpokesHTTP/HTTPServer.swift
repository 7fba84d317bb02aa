import FoundationEssentials
import Glibc
import SpokesConcurrency
import SpokesTransport
import Synchronization

/// A small HTTP/1.1 server for the dashboard: a page, a JSON API and Server-Sent Events.
///
/// It listens, reads, writes and keeps its deadlines through a node's runtime (its
/// ``RuntimeNetwork`` and ``RuntimeClock``): on a machine, sockets and real time; in the
/// simulator, the simulated network and virtual time, so its timeouts are tested without
/// waiting. The listener admits every connection and, when `maxIdleConnections` have no
/// request in progress, first closes the one that has been without one longest (see
/// ``HTTPLimits/maxIdleConnections``). Each connection (an ``HTTPServerConnection``; at
/// most `maxConnections` with a request in progress, and `maxIdleConnections` without; a
/// request over the caps is answered `503`) parses what its stream reads with
/// ``HTTPRequestParser``, keeps `headerTimeout` and `idleTimeout` with timers, and runs
/// the handler and writes on a task; no socket call blocks the cooperative pool.
///
/// Every limit is in ``HTTPLimits``. ``stop()`` never blocks; ``shutdown()`` also waits
/// until every connection has closed.
public final class HTTPServer: Sendable {
    /// The address bound, with the port chosen when `port` was 0.
    public let address: SocketAddress
    public let limits: HTTPLimits
    /// Where its idle and request timeouts and its `Date` headers are read.
    public let clock: any RuntimeClock
    let handler: @Sendable (HTTPRequest) async -> HTTPResponse
    private let listener: any StreamListener
    private let started = Atomic<Bool>(false)
    private let state = Mutex(State())

    private struct State {
        var stopped = false
        var nextID = 0
        var connections: [Int: HTTPServerConnection] = [:]
        /// Connections without a request in progress, and since when (monotonic seconds).
        var idleSince: [Int: Double] = [:]
        /// Connections with a request in progress.
        var busy: Set<Int> = []
        var busyPerHost: [String: Int] = [:]
        var streams = 0
        var refusals: [HTTPRefusal: Int] = [:]
        var closeWaiters: [CheckedContinuation<Void, Never>] = []
    }

    /// Binds `host:port` (an IPv4 address; port 0 picks a free port) on `network`. Call
    /// ``start()`` to accept connections. Throws when the host is not an IPv4 address or
    /// the port cannot be bound. Timeouts and the `Date` header are read from `clock`.
    /// A node passes its runtime's network and clock; the defaults are the machine's.
    public init(host: String, port: UInt16, limits: HTTPLimits = HTTPLimits(), network: any RuntimeNetwork = SocketNetwork(),
                clock: any RuntimeClock = RealClock(), handler: @escaping @Sendable (HTTPRequest) async -> HTTPResponse) throws(TransportError) {
        guard SocketAddress.ipv4(host) != nil else {
            throw .invalidAddress("\(host):\(port)", reason: "'\(host)' is not an IPv4 address")
        }
        listener = try network.listen(on: SocketAddress(host: host, port: port))
        address = listener.address
        self.limits = limits
        self.clock = clock
        self.handler = handler
    }

    deinit {
        stop()
    }

    /// Starts accepting connections. Idempotent.
    public func start() {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        listener.start { [weak self] stream in
            guard let self else { return stream.close() }
            admit(stream)
        }
    }

    /// Stops accepting, closes every connection and ends every event stream (their
    /// `onTermination` runs on their connections' threads). Returns at once; handlers
    /// still running are cancelled and no longer waited for. Idempotent.
    public func stop() {
        let connections: [HTTPServerConnection] = state.withLock { state in
            guard !state.stopped else { return [] }
            state.stopped = true
            // Under the lock: a connection's stream is closed only after it left
            // `connections` under this lock, so none of these is closed (its descriptor
            // reused) yet.
            for connection in state.connections.values { connection.stream.shutdown() }
            return Array(state.connections.values)
        }
        listener.stop()
        if !started.exchange(true, ordering: .acquiringAndReleasing) {
            // Never started: the accept thread sees the stop at once and closes the socket.
            listener.start { $0.close() }
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

    /// From the listener: starts serving a connection, without a request in progress.
    /// When `maxIdleConnections` are without one, the one without one longest is closed
    /// first (its reading ends, and it closes).
    private func admit(_ stream: any ByteStream) {
        let connection: HTTPServerConnection? = state.withLock { state in
            if state.stopped { return nil }
            if state.idleSince.count >= limits.maxIdleConnections,
               let oldest = state.idleSince.min(by: { $0.value < $1.value || ($0.value == $1.value && $0.key < $1.key) })?.key {
                state.idleSince[oldest] = nil
                state.refusals[.crowdedOut, default: 0] += 1
                // Under the lock, as in stop(): its stream is not closed yet.
                state.connections[oldest]?.stream.shutdown()
            }
            state.nextID += 1
            let connection = HTTPServerConnection(id: state.nextID, stream: stream, server: self)
            state.connections[connection.id] = connection
            state.idleSince[connection.id] = clock.now
            return connection
        }
        guard let connection else { return stream.close() }
        connection.start()
    }

    /// A request arrived on `connection`: nil when it may be served (it now counts
    /// against `maxConnections` and `maxConnectionsPerAddress`), else why not (over a cap,
    /// answered `503`; or crowded out meanwhile, not answered).
    func beginRequest(on connection: HTTPServerConnection) -> HTTPRefusal? {
        state.withLock { state in
            guard state.idleSince.removeValue(forKey: connection.id) != nil || state.busy.contains(connection.id) else { return .crowdedOut }
            guard !state.busy.contains(connection.id) else { return nil }
            let host = connection.remoteAddress.host
            let refusal: HTTPRefusal? = state.busy.count >= limits.maxConnections ? .tooManyConnections
                : state.busyPerHost[host, default: 0] >= limits.maxConnectionsPerAddress ? .tooManyConnectionsFromAddress : nil
            if let refusal {
                state.refusals[refusal, default: 0] += 1
                return refusal
            }
            state.busy.insert(connection.id)
            state.busyPerHost[host, default: 0] += 1
            return nil
        }
    }

    /// The request in progress on `connection` was answered; it waits for its next one.
    func endRequest(on connection: HTTPServerConnection) {
        state.withLock { state in
            guard Self.leaveBusy(connection, &state) else { return }
            state.idleSince[connection.id] = clock.now
        }
    }

    private static func leaveBusy(_ connection: HTTPServerConnection, _ state: inout State) -> Bool {
        guard state.busy.remove(connection.id) != nil else { return false }
        let host = connection.remoteAddress.host
        state.busyPerHost[host, default: 1] -= 1
        if state.busyPerHost[host] == 0 { state.busyPerHost[host] = nil }
        return true
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

    /// Forgets `connection` and closes its stream (in that order: see ``stop()``),
    /// then wakes ``shutdown()`` callers once none is left.
    func release(_ connection: HTTPServerConnection) {
        let waiters: [CheckedContinuation<Void, Never>] = state.withLock { state in
            state.connections[connection.id] = nil
            state.idleSince[connection.id] = nil
            _ = Self.leaveBusy(connection, &state)
            guard state.connections.isEmpty else { return [] }
            defer { state.closeWaiters = [] }
            return state.closeWaiters
        }
        connection.stream.close()
        for waiter in waiters { waiter.resume() }
    }
}
