import Glibc
import SpokesConcurrency
import Synchronization

/// Every node of a test or a simulation in one process, talking over memory: the
/// ``RuntimeNetwork`` of a virtual ``Runtime``. Each node sees it through ``host(_:)``, its own
/// address; streams and datagrams between hosts go through here, where a test cuts
/// links (one way or both), heals them, and drops datagrams.
///
/// What it keeps of TCP and UDP: a stream delivers its bytes in order, exactly once,
/// and while its link is cut it holds them (as TCP retransmits) until the link heals or
/// the stream is shut down; a connect across a cut link times out at once, to a port
/// nobody listens on is refused. Datagrams to a cut link, drawn as lost (``loss``) or to
/// a port a firewall drops (``dropDatagrams(to:port:)``) are dropped; a datagram to a broadcast address (`x.y.z.255`) reaches every shared
/// port of that number. Each stream direction and port hands what it receives to its
/// reader one chunk at a time, in order, as a socket's reader thread does
/// (``SimulatedInbox``).
///
/// Latency (``delay(from:by:)``): what a delayed host sends arrives a drawn number of
/// virtual seconds late. Each datagram draws its own delay, so datagrams overtake one
/// another; a stream's chunks arrive in the order they were written (each no earlier
/// than the one before, as TCP keeps its bytes in order), while two streams, or a
/// stream and a datagram, interleave as their draws fall.
public final class SimulatedNetwork: Sendable {
    private struct Link: Hashable {
        var from: String
        var to: String
    }

    private struct State {
        var listeners: [SocketAddress: SimulatedListener] = [:]
        /// Bound ports in the order they were bound (a broadcast reaches them in that order,
        /// the same every run).
        var datagramPorts: [SimulatedDatagramPort] = []
        var nextPort: [String: UInt16] = [:]
        var cuts: Set<Link> = []
        /// Host and port numbers a firewall drops datagrams to (``dropDatagrams(to:port:)``).
        var droppedDatagramPorts: Set<SocketAddress> = []
        var random: UInt64
        var lossRate = 0.0
        /// The delays drawn for what a host sends (key: the host; nil: every host).
        var delays: [String?: ClosedRange<Double>] = [:]

        /// The next draw of splitmix64 in [0, 1): the same draws for the same seed and sends.
        mutating func draw() -> Double {
            random &+= 0x9E37_79B9_7F4A_7C15
            var z = random
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Double((z ^ (z >> 31)) >> 11) / Double(1 << 53)
        }

        /// A delay for what `host` sends now: drawn from its range (or every host's), 0 when none.
        mutating func delay(from host: String) -> Double {
            guard !delays.isEmpty, let range = delays[host] ?? delays[nil] else { return 0 }
            return range.lowerBound + (range.upperBound - range.lowerBound) * draw()
        }
    }

    /// The clock a held chunk waits on for its link to heal.
    let clock: any RuntimeClock
    private let state: Mutex<State>
    private let undelivered = Atomic<Int>(0)
    /// Every byte sent over streams and in datagrams, while capturing (as tcpdump would see it).
    private let captured = Mutex<[UInt8]?>(nil)

    /// Starts keeping every byte that is sent from now on, streams and datagrams alike:
    /// what an eavesdropper on the LAN would see.
    public func startCapture() {
        captured.withLock { $0 = $0 ?? [] }
    }

    /// The bytes captured so far (empty when not capturing).
    public var capture: [UInt8] { captured.withLock { $0 ?? [] } }

    func record(_ bytes: [UInt8]) {
        captured.withLock { capture in capture?.append(contentsOf: bytes) }
    }

    /// What was handed to a reader (``observeDeliveries(_:)``).
    public enum Delivery: Sendable {
        /// A chunk of a stream from host `from`, to its reader at host `to`.
        case chunk(from: String, to: String)
        /// A datagram from `from`, to the port `to` (its owner host and port number).
        case datagram([UInt8], from: SocketAddress, to: SocketAddress)
    }

    /// The observer of ``observeDeliveries(_:)`` (boxed: see ``LockedClosure``; kept bare,
    /// a run's deliveries grew 20 times slower over a seed of 10 nodes).
    private let deliveryObserver = Mutex<LockedClosure<@Sendable (Delivery) -> Void>?>(nil)

    /// Calls `observer` with every chunk and datagram handed to a reader from now on, in
    /// the reader's task just before it takes it: what arrived where, and when (the
    /// simulator's record of arrivals). Replaces an earlier observer.
    public func observeDeliveries(_ observer: @escaping @Sendable (Delivery) -> Void) {
        deliveryObserver.withLock { $0 = LockedClosure(observer) }
    }

    func handing(_ delivery: @autoclosure () -> Delivery) {
        deliveryObserver.withLock { $0 }?.closure(delivery())
    }

    /// Chunks, datagrams and connections sent and not yet handed to their reader (held
    /// ones included): zero when nothing is on its way. A driver of virtual time moves
    /// the clock only then, so no message is late because the test ran ahead of it.
    public var inFlight: Int { undelivered.load(ordering: .acquiring) }

    func sent(_ count: Int = 1) { undelivered.add(count, ordering: .releasing) }
    func delivered(_ count: Int = 1) { undelivered.subtract(count, ordering: .releasing) }

    /// A network whose losses are drawn from `seed`.
    public init(clock: any RuntimeClock, seed: UInt64 = 1) {
        self.clock = clock
        state = Mutex(State(random: seed))
    }

    /// The network as the node at `host` sees it: what it listens on and binds is at
    /// `host`, what it sends comes from there.
    public func host(_ host: String) -> SimulatedHost {
        SimulatedHost(network: self, host: host)
    }

    /// Stops traffic from `from` to `to` (hosts); the other way is untouched.
    public func cut(from: String, to: String) {
        state.withLock { _ = $0.cuts.insert(Link(from: from, to: to)) }
    }

    /// Stops traffic between `a` and `b`, both ways.
    public func cut(between a: String, and b: String) {
        cut(from: a, to: b)
        cut(from: b, to: a)
    }

    /// Restores every link.
    public func heal() {
        state.withLock { $0.cuts.removeAll() }
    }

    /// Drops every datagram to port `port` of `host` from now on, as a firewall on that
    /// host that drops UDP to the port; streams to the same number still pass.
    public func dropDatagrams(to host: String, port: UInt16) {
        state.withLock { _ = $0.droppedDatagramPorts.insert(SocketAddress(host: host, port: port)) }
    }

    /// From now on, what `host` sends (every host's traffic when nil) arrives late by a
    /// delay drawn from `seconds` for each datagram and each chunk of a stream (a
    /// stream's chunks stay in order: a chunk is never due before the one written before
    /// it). Replaces the host's earlier delay; ``stopDelaying()`` ends every delay (what is
    /// on its way keeps the delay it drew).
    public func delay(from host: String?, by seconds: ClosedRange<Double>) {
        let range = max(0, seconds.lowerBound)...max(0, seconds.upperBound)
        state.withLock { $0.delays[host] = range }
    }

    /// Ends every delay of ``delay(from:by:)``: what is sent from now on arrives at once
    /// (a stream's chunk, still no earlier than the one before it).
    public func stopDelaying() {
        state.withLock { $0.delays.removeAll() }
    }

    /// A delay drawn for what `host` sends now (0 when it is not delayed).
    func drawDelay(from host: String) -> Double {
        state.withLock { $0.delay(from: host) }
    }

    /// The share of datagrams dropped (0 to 1); streams lose nothing.
    public var loss: Double {
        get { state.withLock { $0.lossRate } }
        set { state.withLock { $0.lossRate = min(1, max(0, newValue)) } }
    }

    func isCut(from: String, to: String) -> Bool {
        from != to && state.withLock { !$0.cuts.isEmpty && $0.cuts.contains(Link(from: from, to: to)) }
    }

    // MARK: What hosts do

    /// A free port of `host`, counting up from 20000.
    func freePort(on host: String) -> UInt16 {
        state.withLock { state in
            var port = state.nextPort[host, default: 20_000]
            while state.listeners[SocketAddress(host: host, port: port)] != nil
                || state.datagramPorts.contains(where: { $0.address.port == port && $0.owner == host }) {
                port &+= 1
            }
            state.nextPort[host] = port &+ 1
            return port
        }
    }

    func listen(_ listener: SimulatedListener) throws(TransportError) {
        let taken = state.withLock { state in
            if state.listeners[listener.address] != nil { return true }
            state.listeners[listener.address] = listener
            return false
        }
        if taken { throw .socketFailed(operation: "listen on", address: listener.address.description, errno: EADDRINUSE) }
    }

    func stopListening(_ listener: SimulatedListener) {
        state.withLock { state in
            if state.listeners[listener.address] === listener { state.listeners[listener.address] = nil }
        }
    }

    func connect(from host: String, to address: SocketAddress) throws(TransportError) -> any ByteStream {
        if isCut(from: host, to: address.host) || isCut(from: address.host, to: host) {
            throw .connectTimedOut(address: address.description)
        }
        guard let listener = state.withLock({ $0.listeners[address] }) else {
            throw .socketFailed(operation: "connect to", address: address.description, errno: ECONNREFUSED)
        }
        let local = SocketAddress(host: host, port: freePort(on: host))
        let outbound = SimulatedStream.Direction(network: self, from: host, to: address.host)
        let inbound = SimulatedStream.Direction(network: self, from: address.host, to: host)
        let client = SimulatedStream(remoteAddress: address, sending: outbound, receiving: inbound)
        let server = SimulatedStream(remoteAddress: local, sending: inbound, receiving: outbound)
        listener.accept(server)
        return client
    }

    func bind(_ port: SimulatedDatagramPort) throws(TransportError) {
        let taken = state.withLock { state in
            let clash = state.datagramPorts.contains {
                $0.address == port.address && !($0.shared && port.shared)
            }
            if !clash { state.datagramPorts.append(port) }
            return clash
        }
        if taken { throw .socketFailed(operation: "bind udp port", address: port.address.description, errno: EADDRINUSE) }
    }

    func unbind(_ port: SimulatedDatagramPort) {
        state.withLock { $0.datagramPorts.removeAll { $0 === port } }
    }

    /// Sends a datagram from `source` (its owner host) to whoever `destination` reaches.
    func deliver(_ bytes: [UInt8], from source: SimulatedDatagramPort, to destination: SocketAddress) {
        record(bytes)
        let broadcast = destination.host.hasSuffix(".255")
        let receivers = state.withLock { state -> [(SimulatedDatagramPort, Double)] in
            state.datagramPorts.filter { port in
                guard port.address.port == destination.port, state.cuts.isEmpty || !state.cuts.contains(Link(from: source.owner, to: port.owner)),
                      state.droppedDatagramPorts.isEmpty || !state.droppedDatagramPorts.contains(SocketAddress(host: port.owner, port: port.address.port))
                else { return false }
                if broadcast { return port.shared && (port.address.host == destination.host || port.address.host == "0.0.0.0") }
                return port.address.host == destination.host || (port.address.host == "0.0.0.0" && port.owner == destination.host)
            }.filter { _ in
                // The same losses for the same seed and the same sends.
                state.lossRate == 0 || state.draw() >= state.lossRate
            }.map { ($0, state.delay(from: source.owner)) }
        }
        let from = SocketAddress(host: source.owner, port: source.address.port)
        for (receiver, delay) in receivers {
            guard delay > 0 else {
                receiver.receive(bytes, from: from)
                continue
            }
            // A deadline on the clock, not counted as on its way: the driver moves time to it.
            _ = clock.startTimer(after: delay) { receiver.receive(bytes, from: from) }
        }
    }
}

/// One node's view of a ``SimulatedNetwork``: a ``RuntimeNetwork`` at address `host`.
public struct SimulatedHost: RuntimeNetwork {
    public let network: SimulatedNetwork
    /// This node's address (an IPv4 address: `127.0.0.2`).
    public let host: String

    public func listen(on address: SocketAddress) throws(TransportError) -> any StreamListener {
        let port = address.port == 0 ? network.freePort(on: host) : address.port
        let listener = SimulatedListener(network: network, address: SocketAddress(host: host, port: port))
        try network.listen(listener)
        return listener
    }

    public func connect(to address: SocketAddress, timeout: Double) async throws -> any ByteStream {
        try network.connect(from: host, to: address)
    }

    public func bindDatagrams(on address: SocketAddress, shared: Bool) throws(TransportError) -> any DatagramPort {
        let port = address.port == 0 ? network.freePort(on: host) : address.port
        // A port bound on a broadcast or any address keeps it: that is what it receives.
        let bound = address.host.hasSuffix(".255") || address.host == "0.0.0.0" ? address.host : host
        let datagrams = SimulatedDatagramPort(network: network, owner: host, address: SocketAddress(host: bound, port: port), shared: shared)
        try network.bind(datagrams)
        return datagrams
    }
}

/// A listener of a ``SimulatedNetwork``: streams connected before ``start(onAccept:)``
/// wait in its backlog.
final class SimulatedListener: StreamListener {
    private struct State {
        var onAccept: (@Sendable (any ByteStream) -> Void)?
        var backlog: [SimulatedStream] = []
        var stopped = false
    }

    let address: SocketAddress
    private let network: SimulatedNetwork
    private let state = Mutex(State())

    init(network: SimulatedNetwork, address: SocketAddress) {
        self.network = network
        self.address = address
    }

    func start(onAccept: @escaping @Sendable (any ByteStream) -> Void) {
        let waiting = state.withLock { state in
            state.onAccept = onAccept
            defer { state.backlog.removeAll() }
            return state.backlog
        }
        for stream in waiting { hand(stream, to: onAccept) }
    }

    private func hand(_ stream: SimulatedStream, to onAccept: @escaping @Sendable (any ByteStream) -> Void) {
        Task { [network] in
            onAccept(stream)
            network.delivered()
        }
    }

    func stop() {
        let dropped = state.withLock { state in
            defer { state.stopped = true; state.onAccept = nil; state.backlog.removeAll() }
            return state.backlog
        }
        network.stopListening(self)
        for stream in dropped { stream.shutdown() }
        network.delivered(dropped.count)
    }

    func accept(_ stream: SimulatedStream) {
        network.sent()
        let onAccept = state.withLock { state -> (@Sendable (any ByteStream) -> Void)? in
            if state.onAccept == nil, !state.stopped { state.backlog.append(stream) }
            return state.onAccept
        }
        if let onAccept {
            hand(stream, to: onAccept)
        } else if state.withLock({ $0.stopped }) {
            stream.shutdown()
            network.delivered()
        }
    }
}

/// One end of a stream of a ``SimulatedNetwork``.
final class SimulatedStream: ByteStream {
    /// The bytes one way: written by one end, read by the other, held while the link is cut.
    final class Direction: Sendable {
        let network: SimulatedNetwork
        let from: String
        let to: String
        /// The chunks that arrived, for the reader (a delayed one when its deadline comes,
        /// ``write(_:)``).
        let chunks: SimulatedInbox<[UInt8]>
        private struct State {
            /// No more is written (the writer's end, or the reader is gone).
            var ended = false
            /// The reader is gone: what still comes due is dropped.
            var gone = false
            /// Chunks that wait for the reader.
            var queued = 0
            /// Chunks that wait on the clock for their delay (``write(_:)``), and whether the
            /// end waits behind them: they reach the reader when it comes, in order.
            var delayed = 0
            var endDelayed = false
            /// Whether the reader holds its chunks for a cut link (then they wait on the
            /// clock, and the network does not count them as in flight).
            var holding = false
            /// When the last chunk written arrives.
            var lastDue = -Double.infinity
        }

        private let state = Mutex(State())

        init(network: SimulatedNetwork, from: String, to: String) {
            self.network = network
            self.from = from
            self.to = to
            chunks = SimulatedInbox(clock: network.clock)
        }

        var isCut: Bool { network.isCut(from: from, to: to) }

        /// Sends `bytes` the reader's way: to its queue now, or, delayed
        /// (``SimulatedNetwork/delay(from:by:)``), as a deadline on the clock that puts them
        /// there when it comes, with no task waiting for it. A chunk never overtakes the one
        /// written before it: while any waits on the clock, the next waits behind it.
        func write(_ bytes: [UInt8]) -> Bool {
            let delay = network.drawDelay(from: from)
            let now = network.clock.now
            let written = state.withLock { state -> (counted: Bool, due: Double, delayed: Bool)? in
                guard !state.ended else { return nil }
                // In order within the stream: never due before the chunk written before it.
                state.lastDue = max(state.lastDue, delay > 0 ? now + delay : now)
                if state.lastDue > now || state.delayed > 0 {
                    state.delayed += 1
                    return (false, state.lastDue, true)
                }
                state.queued += 1
                return (!state.holding, state.lastDue, false)
            }
            guard let written else { return false }
            network.record(bytes)
            guard !written.delayed else {
                _ = network.clock.startTimer(after: written.due - now) { [self] in arrived(bytes) }
                return true
            }
            if written.counted { network.sent() }
            chunks.put(bytes)
            return true
        }

        /// A delayed chunk's deadline came: it joins the reader's queue (and counts as on
        /// its way), unless the reader is gone; the end that waited behind the last one
        /// follows it.
        private func arrived(_ bytes: [UInt8]) {
            let arrived = state.withLock { state -> (take: Bool, counted: Bool, end: Bool) in
                state.delayed -= 1
                let end = state.delayed == 0 && state.endDelayed
                guard !state.gone else { return (false, false, end) }
                state.queued += 1
                return (true, !state.holding, end)
            }
            if arrived.take {
                if arrived.counted { network.sent() }
                chunks.put(bytes)
            }
            if arrived.end { chunks.finish() }
        }

        /// The reader took a chunk.
        func took() {
            state.withLock { $0.queued -= 1 }
            network.delivered()
        }

        /// Whether the reader takes its next chunk now. Not while the link is cut: it holds
        /// them, as TCP holds what it cannot deliver (then they wait on the clock, and the
        /// network does not count them as on their way), and asks again every 10 ms. A
        /// direction that ended while its link is cut takes nothing more.
        func readiness() -> SimulatedInbox<[UInt8]>.Readiness {
            let cut = isCut
            let (hold, ended, toggled) = state.withLock { state -> (Bool, Bool, Int) in
                let hold = cut && !state.ended
                guard hold != state.holding else { return (hold, state.ended, 0) }
                state.holding = hold
                return (hold, state.ended, state.queued)
            }
            if toggled > 0 {
                if hold { network.delivered(toggled) } else { network.sent(toggled) }
            }
            if hold { return .after(0.01) }
            return cut && ended ? .end : .now
        }

        /// No more is written; the reader takes what was, then the end (after the chunks
        /// that wait on the clock, as a FIN comes after the bytes before it).
        func end() {
            let atOnce = state.withLock { state -> Bool in
                state.ended = true
                guard state.delayed == 0 else {
                    state.endDelayed = true
                    return false
                }
                return true
            }
            if atOnce { chunks.finish() }
        }

        /// The reader is gone: what it never took is no longer on its way.
        func readerGone() {
            let left = state.withLock { state in
                defer { state.ended = true; state.gone = true; state.queued = 0 }
                return state.holding ? 0 : state.queued
            }
            chunks.finish()
            network.delivered(left)
        }
    }

    let remoteAddress: SocketAddress
    var writesWait: Bool { false }
    private let sending: Direction
    private let receiving: Direction
    private let reading = Atomic<Bool>(false)

    init(remoteAddress: SocketAddress, sending: Direction, receiving: Direction) {
        self.remoteAddress = remoteAddress
        self.sending = sending
        self.receiving = receiving
    }

    func startReading(onBytes: @escaping @Sendable (ArraySlice<UInt8>) -> Bool, onEnd: @escaping @Sendable (StreamEnd) -> Void) {
        guard !reading.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let receiving = receiving
        receiving.chunks.start(SimulatedInbox.Reader(
            ready: { receiving.readiness() },
            take: { chunk in
                receiving.network.handing(.chunk(from: receiving.from, to: receiving.to))
                let more = onBytes(chunk[...])
                receiving.took()
                guard more else {
                    onEnd(.stopped)
                    receiving.readerGone()
                    return false
                }
                return true
            },
            end: {
                onEnd(.closed)
                receiving.readerGone()
            }))
    }

    func write(_ bytes: [UInt8]) -> Bool {
        sending.write(bytes)
    }

    func shutdown() {
        sending.end()
        receiving.end()
    }

    func shutdownWriting() {
        sending.end()
    }

    func close() {
        shutdown()
        // Nobody will read what was sent here: it is no longer on its way.
        if !reading.exchange(true, ordering: .acquiringAndReleasing) { receiving.readerGone() }
    }
}

/// A datagram port of a ``SimulatedNetwork``.
final class SimulatedDatagramPort: DatagramPort {
    private struct State {
        var stopped = false
        /// Whether a reader started: before, datagrams are dropped (nobody would take them).
        var receiving = false
        /// Datagrams received and not yet handed to the reader.
        var queued = 0
    }

    let address: SocketAddress
    /// The host whose port this is (`address` may be a broadcast address).
    let owner: String
    let shared: Bool
    private let network: SimulatedNetwork
    private let state = Mutex(State())
    private let datagrams: SimulatedInbox<([UInt8], SocketAddress)>

    init(network: SimulatedNetwork, owner: String, address: SocketAddress, shared: Bool) {
        self.network = network
        self.owner = owner
        self.address = address
        self.shared = shared
        datagrams = SimulatedInbox(clock: network.clock)
    }

    func send(_ bytes: [UInt8], to destination: SocketAddress) {
        guard !state.withLock({ $0.stopped }) else { return }
        network.deliver(bytes, from: self, to: destination)
    }

    func startReceiving(maximumSize: Int, onDatagram: @escaping @Sendable (ArraySlice<UInt8>, SocketAddress) -> Void) {
        let starts = state.withLock { state in
            defer { state.receiving = true }
            return !state.receiving
        }
        guard starts else { return }
        datagrams.start(SimulatedInbox.Reader(take: { [self] datagram in
            let (bytes, source) = datagram
            // After stop() the ones still buffered were already counted as gone.
            let live = state.withLock { state in
                guard !state.stopped else { return false }
                state.queued -= 1
                return true
            }
            guard live else { return true }
            network.handing(.datagram(bytes, from: source, to: SocketAddress(host: owner, port: address.port)))
            onDatagram(bytes.prefix(maximumSize + 1), source)
            network.delivered()
            return true
        }))
    }

    func receive(_ bytes: [UInt8], from source: SocketAddress) {
        let open = state.withLock { state in
            guard !state.stopped, state.receiving else { return false }
            state.queued += 1
            return true
        }
        guard open else { return }
        network.sent()
        datagrams.put((bytes, source))
    }

    func stop() {
        let left = state.withLock { state in
            defer { state.stopped = true; state.queued = 0 }
            return state.stopped ? 0 : state.queued
        }
        network.unbind(self)
        datagrams.finish()
        network.delivered(left)
    }
}
