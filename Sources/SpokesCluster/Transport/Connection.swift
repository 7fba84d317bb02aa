import FoundationEssentials
import Glibc
import SpokesConcurrency
import Synchronization

/// One TCP connection, carrying framed JSON ``WireMessage``s over a ``ByteStream`` of
/// the node's runtime (a socket on a machine, memory in the simulator).
///
/// The stream's reader (for a socket, the process's one socket thread, `SocketReactor`)
/// hands each decoded message to `onMessage` (a ``WireMessage/batch(_:)`` as one
/// message), which must not block: every connection's reads wait meanwhile. Writes never
/// block a caller: when nothing is queued or being written, the sender writes its frame
/// in place, as much as the socket takes without waiting (so a lone call or reply costs
/// no hop to another thread and waits for nothing); whatever the socket does not take,
/// and whatever is sent meanwhile, goes to a write thread of the connection's own
/// (`SerialThread`, started the first time it is needed: an idle connection has no
/// thread of its own), which may block, so a slow peer delays only its own connection and
/// no cooperative-pool thread ever blocks on a socket. Whoever writes takes every
/// message queued by then: on a connection that agreed protocol 6 the calls and replies
/// among them go as batches (``WireBatch``: one frame, one seal and one decode for many),
/// and every frame of the round in one `send` (one wake-up of the peer's reader).
/// `onClose` runs exactly once, with the reason.
///
/// Hostile input closes this connection and nothing else, and is counted in
/// `rejections`: a frame over the size limit (64 KiB until the handshake is done), a
/// frame that does not open once the session is sealed (see `FrameSeal`),
/// JSON beyond the shape limits, or a message that does not decode. A peer that stops
/// reading is dropped once `maximumSendQueueBytes` wait for it, so memory stays bounded.
public final class Connection: Sendable, CustomStringConvertible {
    /// What a connection accepts, from ``ClusterSettings``.
    struct Limits: Sendable {
        var maximumFrameSize: Int
        var json: JSONShapeLimits
        var maximumSendQueueBytes: Int

        /// Largest frame before the handshake finishes: handshakes are small, and a
        /// stranger should not make us buffer megabytes.
        static let handshakeFrameSize = 64 * 1024

        init(_ settings: ClusterSettings) {
            maximumFrameSize = settings.maximumFrameSize
            json = settings.jsonLimits
            maximumSendQueueBytes = settings.maximumSendQueueBytes
        }
    }

    public struct Handlers: Sendable {
        public var onMessage: @Sendable (Connection, WireMessage) -> Void
        public var onClose: @Sendable (Connection, String) -> Void

        public init(onMessage: @escaping @Sendable (Connection, WireMessage) -> Void,
                    onClose: @escaping @Sendable (Connection, String) -> Void) {
            self.onMessage = onMessage
            self.onClose = onClose
        }
    }

    private struct State {
        var closed = false
        var handlers: Handlers?
        var peer: WireMessage.Handshake?
        /// True once the handshake is done: the full frame size applies.
        var established = false
        /// The writer's copy of the session's seal (it only seals) and the reader's (it
        /// only opens): nil in an open cluster.
        var sender: FrameSeal?
        var receiver: FrameSeal?
        var rejection: Rejection?
        /// The peer's handshake came in clear: it has no secret (or none of ours), so a
        /// refusal goes to it in clear, the one thing it can read.
        var peerSpeaksInClear = false
    }

    /// What a node tells a peer whose sealed handshake does not open with its secret
    /// (a client turns it into "holds another cluster secret than this client").
    public static let differentSecretsRefusal = "the handshake this node received does not open with its cluster secret: the two hold different secrets"

    /// The first byte of a handshake frame sealed in a ``SealedBox`` (a frame in clear is
    /// JSON, and starts with `{`).
    static let sealedHandshakeMark: UInt8 = 0x01

    public let remoteAddress: SocketAddress
    /// True on the side that dialled.
    public let isOutbound: Bool
    /// The node's clock: what silence and round trips are measured with.
    private let clock: any RuntimeClock
    /// Monotonic seconds when the connection opened.
    public let opened: Double
    private let stream: any ByteStream
    /// Frames being put together from what the stream delivered; only its reader uses it.
    private let decoder: Mutex<FrameDecoder>
    private static let jsonDecoder = JSONDecoder()
    private let limits: Limits
    private let rejections: RejectionCounters
    /// Frames and bytes this connection carried, added to its system's counts.
    private let traffic: TrafficCounters
    /// Every write, in order, on a thread of the connection's own (see `SerialThread`);
    /// nil where the stream's writes never wait (the simulator's): they run in the caller.
    private let writes: SerialThread?
    /// What waits to be written, in order: messages, and blocks to run after them;
    /// `scheduled` while someone writes (a sender in place, or a flush queued on the write
    /// thread or running there): that writer empties it, and nobody else writes.
    private let outgoing = Mutex<(items: [Outgoing], scheduled: Bool)>(([], false))

    /// One thing to write: a message to seal (alone or in a batch) and write, sealed
    /// bytes a sender could not write without waiting, or a block to run after what
    /// comes before it (on the write thread).
    private enum Outgoing {
        case message(Unsealed)
        case sealed([UInt8])
        case block(@Sendable () -> Void)
    }

    /// A message's JSON, not sealed yet.
    private struct Unsealed {
        var payload: [UInt8]
        /// A refusal to a peer that spoke in clear goes in clear.
        var isRefusal: Bool
        /// A call or reply: it may share a frame (``WireBatch/mayCarry(_:)``).
        var batchable: Bool
    }

    /// Rounds a sender writing in place takes from the queue before handing what is left
    /// to the write thread: it writes for others only while that is quick.
    private static let inPlaceRounds = 4

    /// Most bytes of messages written in one write: a larger one would hold the frames
    /// behind it until all of it is sent.
    private static let maximumBatchBytes = 256 * 1024
    /// Most bytes of messages in one batch frame: ``WireBatch/maximumBytes``, and never
    /// more than a quarter of this node's frame limit (a cluster's nodes share it).
    private var batchBytes: Int { min(WireBatch.maximumBytes, limits.maximumFrameSize / 4) }
    /// Held from sealing a frame to handing it to the stream, so frames go out in the
    /// order of their sequence numbers even when callers write in place.
    private let writeOrder = Mutex(())
    private let state = Mutex(State())
    private let queuedBytes = Atomic<Int>(0)
    /// Calls received on this connection and still running here.
    let callsInFlight = Atomic<Int>(0)
    /// The protocol version the handshake agreed (0 before it ends): read on every call,
    /// so kept apart from the lock of ``peer``.
    let agreedVersion = Atomic<Int>(0)
    /// Heartbeats sent on this connection and their acknowledgements.
    let roundTrip = Mutex(RoundTripEstimator())
    /// One encoder for every frame of every connection (JSONEncoder is Sendable and
    /// keeps no state between calls), instead of one allocated per frame.
    private static let encoder = JSONEncoder()
    /// Monotonic time of the last message received, as the bits of a Double.
    private let lastReceivedBits: Atomic<UInt64>
    /// Monotonic time of the last message queued to send, as the bits of a Double.
    private let lastSentBits = Atomic<UInt64>(0)

    /// Monotonic seconds when the last message was queued to send (0 before any).
    public var lastSent: Double { Double(bitPattern: lastSentBits.load(ordering: .relaxed)) }

    /// Monotonic seconds when the last message arrived (or when the connection opened).
    public var lastReceived: Double { Double(bitPattern: lastReceivedBits.load(ordering: .relaxed)) }

    /// ``lastReceived`` as ``receivedSinceAsked()`` last gave it (the bits of a Double).
    private let lastAskedBits = Atomic<UInt64>(0)

    /// ``lastReceived`` when it is after 0 and not what this gave the time before, else
    /// nil: news of the peer for the one caller that asks at every heartbeat tick (the
    /// node's membership, to which the same time again is no news).
    func receivedSinceAsked() -> Double? {
        let received = lastReceivedBits.load(ordering: .relaxed)
        guard Double(bitPattern: received) > 0, lastAskedBits.exchange(received, ordering: .relaxed) != received else { return nil }
        return Double(bitPattern: received)
    }

    /// The node's secrets (nil in an open cluster): the frames before the handshake ends
    /// are sealed, so not even a hello says which cluster or node is talking; the
    /// session's ``FrameSeal`` takes over once it is established.
    private let keyring: KeyringStore?
    /// The secret this connection's handshake is sealed and proved with: the primary
    /// when we dial; the one that opened the dialler's first frame when we accept.
    private let chosenKey: Mutex<KeyMaterial?>

    /// The secret of this connection's handshake, once known.
    var handshakeKey: KeyMaterial? { chosenKey.withLock { $0 } }

    init(
        stream: any ByteStream, isOutbound: Bool, limits: Limits, rejections: RejectionCounters, clock: any RuntimeClock,
        keyring: KeyringStore? = nil, traffic: TrafficCounters = TrafficCounters()
    ) {
        self.traffic = traffic
        self.clock = clock
        self.keyring = keyring
        chosenKey = Mutex(isOutbound ? keyring?.primary : nil)
        opened = clock.now
        lastReceivedBits = Atomic(opened.bitPattern)
        self.stream = stream
        decoder = Mutex(FrameDecoder(maximumFrameSize: min(Limits.handshakeFrameSize, limits.maximumFrameSize)))
        remoteAddress = stream.remoteAddress
        self.isOutbound = isOutbound
        self.limits = limits
        self.rejections = rejections
        writes = stream.writesWait ? SerialThread(name: "spokes.connection.write") : nil
    }

    public var description: String {
        let peer = state.withLock { $0.peer?.node.description }
        return peer.map { "\($0) at \(remoteAddress)" } ?? "\(remoteAddress)"
    }

    /// The peer's handshake, once it has been exchanged.
    public var peer: WireMessage.Handshake? {
        get { state.withLock { $0.peer } }
        set { state.withLock { $0.peer = newValue } }
    }

    /// The peer's node once the handshake is done (``peer``'s), read without copying the
    /// whole handshake: what every call's execution and every heartbeat tick ask.
    public var peerNode: NodeID? { state.withLock { $0.peer?.node } }

    /// ``peerNode`` when the peer is a node (it listens: a client's handshake gives no
    /// address), read as ``peerNode`` is.
    public var listeningPeerNode: NodeID? { state.withLock { $0.peer?.address.isEmpty == false ? $0.peer?.node : nil } }

    public var isClosed: Bool { state.withLock { $0.closed } }

    /// The close reason when the peer ends the connection (end of stream).
    public static let peerClosedReason = "peer closed the connection"

    /// Marks the handshake done. Frames received from now on must open with `seal`
    /// (when there is a secret), and may be as large as the frame limit. Call on the
    /// reader, from `onMessage`, so it applies from the next frame.
    func establish(opening seal: FrameSeal?) {
        state.withLock { state in
            state.established = true
            state.receiver = seal
        }
    }

    /// Seals every frame queued after this call with `seal`.
    func sealSends(with seal: FrameSeal?) {
        guard let seal else { return }
        onWriter(hereWhenIdle: true) { [self] in state.withLock { $0.sender = seal } }
    }

    /// Starts reading; messages and the close are reported to `handlers`.
    func start(_ handlers: Handlers) {
        state.withLock { $0.handlers = handlers }
        stream.startReading(onBytes: { [self] bytes in received(bytes) }, onEnd: { [self] end in
            switch end {
            case .closed: close(reason: Self.peerClosedReason)
            case .failed(let error): close(reason: "receive failed: \(error)")
            case .stopped: break
            }
            // The write thread ends after this, the last thing queued on it: a sender
            // writing in place may still hand it what it could not write.
            onWriter(hereWhenIdle: true) { [stream, writes] in
                stream.close()
                writes?.finish()
            }
        })
    }

    /// What ``send(_:)`` did with a message.
    public enum Sent: Sendable, Equatable {
        /// Queued (or dropped: the connection is closed, or closing for the failure it met).
        case queued
        /// Not sent: its frame of `bytes` would be larger than `limits.max_frame_bytes`.
        case tooLarge(bytes: Int)
    }

    /// Queues `message` for sending; does nothing once closed. Sends nothing, saying
    /// ``Sent/tooLarge(bytes:)``, when its frame would be larger than
    /// `limits.max_frame_bytes`: a peer refuses such a frame by closing the connection
    /// (every call on it failing, the peer declared dead), so a call that large fails
    /// alone (``ClusterSystem`` ends it with ``RemoteCallError/serializationFailed(_:)``),
    /// and a reply that large goes as an error reply saying so.
    @discardableResult
    public func send(_ message: WireMessage) -> Sent {
        guard !isClosed else { return .queued }
        let payload: [UInt8]
        do {
            payload = try Self.payload(of: message)
        } catch {
            close(reason: "cannot encode \(message): \(error)")
            return .queued
        }
        return send(message, payload: payload)
    }

    /// `message`'s frame payload before it is sealed: the same on every connection, so a
    /// message sent to every peer (a heartbeat) is encoded once for all of them.
    static func payload(of message: WireMessage) throws -> [UInt8] {
        // The hot messages by hand (``WireCodec``), the rest through `Codable`.
        try WireCodec.encode(message) ?? Array(encoder.encode(message))
    }

    /// Sends `message` as ``send(_:)`` does, its payload encoded already (``payload(of:)``).
    @discardableResult
    func send(_ message: WireMessage, payload: [UInt8]) -> Sent {
        guard !isClosed else { return .queued }
        let frameBytes = payload.count + FrameSeal.overhead
        if frameBytes > limits.maximumFrameSize {
            if case .reply(let reply) = message {
                return send(.reply(WireMessage.Reply(id: reply.id, outcome: .error(
                    type: "FrameTooLarge", message: Self.tooLarge("the reply", bytes: frameBytes, limit: limits.maximumFrameSize)))))
            }
            return .tooLarge(bytes: frameBytes)
        }
        let queued = queuedBytes.wrappingAdd(payload.count, ordering: .relaxed).newValue
        if queued > limits.maximumSendQueueBytes {
            close(reason: "the peer is not reading: \(queued) bytes waiting to be sent", rejecting: .sendQueueFull)
            return .queued
        }
        lastSentBits.store(clock.now.bitPattern, ordering: .relaxed)
        let isRefusal = if case .refused = message { true } else { false }
        let unsealed = Unsealed(payload: payload, isRefusal: isRefusal, batchable: WireBatch.mayCarry(message))
        guard writes != nil else {
            // Writes never wait here (the simulator's streams): written in the caller.
            write([unsealed])
            return .queued
        }
        let inPlace = outgoing.withLock { state in
            if state.scheduled {
                state.items.append(.message(unsealed))
                return false
            }
            state.scheduled = true
            return true
        }
        if inPlace { writeInPlace(unsealed) }
        return .queued
    }

    /// Why a message whose frame is `bytes` long was not sent: more than a frame carries.
    static func tooLarge(_ what: String, bytes: Int, limit: Int) -> String {
        "\(what) would be a frame of \(bytes) bytes, more than limits.max_frame_bytes (\(limit)) lets a peer take: it would close the connection"
    }

    /// Writes `first`, then what was queued meanwhile, in the sender's thread without
    /// waiting (see the type's comment), for at most ``inPlaceRounds`` rounds; hands
    /// whatever is left (bytes the socket did not take, a block, more messages) to the
    /// write thread. Called by the sender that set `scheduled`.
    private func writeInPlace(_ first: Unsealed) {
        var messages = [first]
        for round in 1...Self.inPlaceRounds {
            let left = writeWithoutWaiting(messages)
            let next = outgoing.withLock { state -> [Unsealed]? in
                if let left {
                    state.items.insert(left, at: 0)
                    return nil
                }
                if state.items.isEmpty {
                    state.scheduled = false
                    return []
                }
                guard round < Self.inPlaceRounds else { return nil }
                var taken: [Unsealed] = []
                var bytes = 0
                for item in state.items {
                    guard case .message(let message) = item, bytes < Self.maximumBatchBytes else { break }
                    taken.append(message)
                    bytes += message.payload.count
                }
                state.items.removeFirst(taken.count)
                return taken.isEmpty ? nil : taken
            }
            guard let next else { break }
            if next.isEmpty { return }
            messages = next
        }
        // Still `scheduled`: the write thread takes it from here.
        writes?.async { [self] in flushOutgoing() }
    }

    /// Seals `messages` and writes what the stream takes now; returns nil when all of it
    /// went, else what must be written next: the bytes left, or the close (on the write
    /// thread) of a connection that failed. Counts them off the send queue.
    private func writeWithoutWaiting(_ messages: [Unsealed]) -> Outgoing? {
        defer { queuedBytes.wrappingSubtract(messages.reduce(0) { $0 + $1.payload.count }, ordering: .relaxed) }
        guard !isClosed else { return nil }
        return writeOrder.withLock { _ -> Outgoing? in
            guard let (bytes, frames) = sealed(messages) else {
                return .block { [self] in close(reason: Self.sealsExhausted) }
            }
            // nil: broken; the write thread's blocking write fails too, and closes.
            guard let written = stream.writeWithoutWaiting(bytes) else { return .sealed(bytes) }
            traffic.sent(frames: frames, bytes: bytes.count)
            return written == bytes.count ? nil : .sealed(Array(bytes[written...]))
        }
    }

    private static let sealsExhausted = "this connection sealed all the frames its keys allow: it must be opened again"

    /// Queues `item` for the write thread, and a flush unless one is already queued or
    /// running (it takes this item too).
    private func enqueue(_ item: Outgoing) {
        let schedule = outgoing.withLock { state in
            state.items.append(item)
            defer { state.scheduled = true }
            return !state.scheduled
        }
        if schedule { writes?.async { [self] in flushOutgoing() } }
    }

    /// On the write thread: writes what was queued, many messages per write (a block
    /// queued between them runs after those before it are written), until nothing is left.
    private func flushOutgoing() {
        while true {
            let items = outgoing.withLock { state -> [Outgoing] in
                if state.items.isEmpty { state.scheduled = false }
                defer { state.items.removeAll(keepingCapacity: true) }
                return state.items
            }
            guard !items.isEmpty else { return }
            var messages: [Unsealed] = []
            var bytes = 0
            for item in items {
                switch item {
                case .message(let message):
                    if bytes > 0, bytes + message.payload.count > Self.maximumBatchBytes {
                        write(messages)
                        messages.removeAll(keepingCapacity: true)
                        bytes = 0
                    }
                    messages.append(message)
                    bytes += message.payload.count
                case .sealed(let sealed):
                    write(messages)
                    messages.removeAll(keepingCapacity: true)
                    bytes = 0
                    let written = writeOrder.withLock { _ in isClosed || stream.write(sealed) }
                    if !written { close(reason: "send failed: \(String(cString: strerror(errno)))") }
                case .block(let block):
                    write(messages)
                    messages.removeAll(keepingCapacity: true)
                    bytes = 0
                    block()
                }
            }
            write(messages)
        }
    }

    /// Seals `messages` in order (calls and replies together in batches where the
    /// connection agreed them) and writes them in one write; counts them off the send
    /// queue whatever happens. Nothing once the connection is closed.
    private func write(_ messages: [Unsealed]) {
        guard !messages.isEmpty else { return }
        defer { queuedBytes.wrappingSubtract(messages.reduce(0) { $0 + $1.payload.count }, ordering: .relaxed) }
        guard !isClosed else { return }
        let written = writeOrder.withLock { _ -> Bool? in
            guard let (bytes, frames) = sealed(messages) else { return nil }
            let written = stream.write(bytes)
            if written { traffic.sent(frames: frames, bytes: bytes.count) }
            return written
        }
        guard let written else { return close(reason: Self.sealsExhausted) }
        if !written {
            close(reason: "send failed: \(String(cString: strerror(errno)))")
        }
    }

    /// `messages` as frames, sealed in order, end to end, and each frame's size; nil once
    /// the session's seal is spent (2^64 - 1 frames; one more would repeat a nonce).
    /// Calls and replies share frames (``WireBatch``) once the handshake agreed protocol
    /// 6. Call with `writeOrder` held, so frames go out in the order of their sealing.
    private func sealed(_ messages: [Unsealed]) -> (bytes: [UInt8], frames: Int)? {
        // Most writes carry one message (a heartbeat, a lone call or reply): one frame,
        // without a list of frames to make.
        if messages.count == 1 {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(messages[0].payload.count + 4 + 32)
            return seal(messages[0].payload, isRefusal: messages[0].isRefusal, to: &bytes) ? (bytes, 1) : nil
        }
        let batching = agreedVersion.load(ordering: .acquiring) >= ProtocolVersions.batching
            && limits.json.maximumDepth >= WireBatch.minimumJSONDepth
        let frames = batching
            ? WireBatch.frames(carrying: messages.map { WireBatch.Item(payload: $0.payload, batchable: $0.batchable) }, maximumBytes: batchBytes)
            : messages.indices.map { WireBatch.Frame(payload: messages[$0].payload, items: $0..<$0 + 1) }
        var bytes: [UInt8] = []
        // Room for each frame's length, and a seal's mark and tag.
        bytes.reserveCapacity(frames.reduce(0) { $0 + $1.payload.count + 4 + 32 })
        for frame in frames {
            let isRefusal = frame.items.count == 1 && messages[frame.items.lowerBound].isRefusal
            guard seal(frame.payload, isRefusal: isRefusal, to: &bytes) else { return nil }
        }
        return (bytes, frames.count)
    }

    /// Seals one frame's `payload` (with the session's seal, the handshake's key, or in
    /// clear) and appends the frame, its length first, to `bytes`; false once the
    /// session's seal is spent.
    private func seal(_ payload: [UInt8], isRefusal: Bool, to bytes: inout [UInt8]) -> Bool {
        let sealed = state.withLock { state -> [UInt8]? in
            if state.sender != nil { return try? state.sender!.seal(payload) }
            if let keyring, !(isRefusal && state.peerSpeaksInClear) {
                let key = chosenKey.withLock { $0 } ?? keyring.primary
                return [Self.sealedHandshakeMark] + key.handshakeFrames.seal(payload)
            }
            return payload
        }
        guard let sealed else { return false }
        FrameDecoder.append(frameOf: sealed, to: &bytes)
        return true
    }

    /// Sends `message`, then closes: for a last word such as `refused` or `leave`.
    public func send(_ message: WireMessage, thenCloseWithReason reason: String) {
        send(message)
        onWriter { [self] in close(reason: reason) }
    }

    /// Sends `message`, then closes as ``close(reason:rejecting:)`` does: a refusal the
    /// peer can read before its connection ends.
    func send(_ message: WireMessage, thenCloseWithReason reason: String, rejecting rejection: Rejection) {
        // Counted now, not at the close: the peer may read the refusal before the close runs.
        let first = state.withLock { state in
            guard !state.closed, state.rejection == nil else { return false }
            state.rejection = rejection
            return true
        }
        if first { rejections.count(rejection) }
        send(message)
        onWriter { [self] in close(reason: reason) }
    }

    /// Closes once every frame queued so far is written (a reply sent just before).
    func closeAfterQueuedWrites(reason: String) {
        onWriter { [self] in close(reason: reason) }
    }

    /// Runs `block` after every write queued so far: on the write thread, or here where
    /// writes run in place. `hereWhenIdle`: here too when nothing is queued or being
    /// written (every write so far is done), so an idle connection never starts its write
    /// thread; only for a block that takes no lock its caller may hold.
    private func onWriter(hereWhenIdle: Bool = false, _ block: @escaping @Sendable () -> Void) {
        guard writes != nil else { return block() }
        guard hereWhenIdle else { return enqueue(.block(block)) }
        let runsHere = outgoing.withLock { state in
            guard !state.scheduled else {
                state.items.append(.block(block))
                return false
            }
            // Held meanwhile: a sender queues behind the block instead of writing in place.
            state.scheduled = true
            return true
        }
        guard runsHere else { return }
        block()
        let more = outgoing.withLock { state in
            if state.items.isEmpty { state.scheduled = false }
            return !state.items.isEmpty
        }
        if more { writes?.async { [self] in flushOutgoing() } }
    }

    /// Blocks until every write queued so far has been attempted (a sender writing in
    /// place may hand its rest to the write thread after a first wait: waits again, a
    /// bounded number of times). Call off the cooperative pool.
    func drainWrites() {
        // A write thread never started has nothing queued, unless a sender writes in place.
        guard let writes, writes.isStarted || outgoing.withLock({ $0.scheduled }) else { return }
        for _ in 0..<100 {
            writes.sync()
            if isClosed || !outgoing.withLock({ $0.scheduled }) { return }
        }
    }

    /// Whether this connection ever started its write thread (a write had to wait).
    var startedWriteThread: Bool { writes?.isStarted ?? false }

    /// Why this connection was closed, when it was closed for hostile or broken input.
    public var rejection: Rejection? { state.withLock { $0.rejection } }

    /// Counts `rejection`, remembers it as the reason for closing, and closes.
    func close(reason: String, rejecting rejection: Rejection) {
        let first = state.withLock { state in
            guard !state.closed, state.rejection == nil else { return false }
            state.rejection = rejection
            return true
        }
        if first { rejections.count(rejection) }
        close(reason: reason)
    }

    /// Closes the connection (once) and reports `reason` to `onClose`.
    public func close(reason: String) {
        let handlers: Handlers?? = state.withLock { state in
            guard !state.closed else { return .none }
            state.closed = true
            return .some(state.handlers)
        }
        guard case .some(let handlers) = handlers else { return }
        // Wakes the reader, which closes the stream after pending writes.
        stream.shutdown()
        handlers?.onClose(self, reason)
    }

    /// Takes what the stream delivered: every whole frame in it is checked, decoded and
    /// handed on. Returns false once the connection is closed (reading stops).
    private func received(_ bytes: ArraySlice<UInt8>) -> Bool {
        traffic.received(bytes: bytes.count)
        decoder.withLock { $0.feed(bytes) }
        while true {
            let frame: [UInt8]
            do {
                guard let next = try decoder.withLock({ try $0.nextFrame() }) else { return true }
                frame = next
                traffic.receivedFrame()
            } catch {
                close(reason: "protocol violation: \(error)", rejecting: .frameTooLarge)
                return false
            }
            switch message(in: frame, decoder: Self.jsonDecoder) {
            case .failure(let failure) where failure.rejection == .malformedFrame || failure.refuse:
                // A field of the wrong type or out of its type's range: say which, then close.
                send(.refused(WireMessage.Refusal(reason: failure.reason)), thenCloseWithReason: failure.reason, rejecting: failure.rejection)
                return false
            case .failure(let failure):
                close(reason: failure.reason, rejecting: failure.rejection)
                return false
            case .success(let message):
                lastReceivedBits.store(clock.now.bitPattern, ordering: .relaxed)
                guard let handlers = state.withLock({ $0.closed ? nil : $0.handlers }) else { return false }
                handlers.onMessage(self, message)
                if state.withLock({ $0.established }) {
                    let maximum = limits.maximumFrameSize
                    decoder.withLock { $0.maximumFrameSize = maximum }
                }
            }
        }
    }

    private struct ReadFailure: Error {
        var rejection: Rejection
        var reason: String
        /// Say why to the peer (in clear) before closing.
        var refuse = false
    }

    /// The message in one frame: its tag checked (once authenticated), its JSON shape
    /// checked, then decoded.
    private func message(in frame: [UInt8], decoder: JSONDecoder) -> Result<WireMessage, ReadFailure> {
        enum Opened { case payload(ArraySlice<UInt8>), failed, sealedButNoSecret, sealedWithAnotherSecret }
        let opened: Opened = state.withLock { state in
            if state.receiver != nil { return state.receiver!.open(frame).map { .payload($0[...]) } ?? .failed }
            if frame.first == Self.sealedHandshakeMark {
                guard let keyring else {
                    state.peerSpeaksInClear = true
                    return .sealedButNoSecret
                }
                // The chosen secret, or (an acceptor's first frame) any installed one.
                let candidates = chosenKey.withLock { $0 }.map { [$0] } ?? keyring.all
                for key in candidates {
                    if let payload = key.handshakeFrames.open(frame.dropFirst()) {
                        chosenKey.withLock { $0 = key }
                        return .payload(payload[...])
                    }
                }
                state.peerSpeaksInClear = true
                return .sealedWithAnotherSecret
            }
            if keyring != nil { state.peerSpeaksInClear = true }
            return .payload(frame[...])
        }
        let payload: ArraySlice<UInt8>
        switch opened {
        case .payload(let opened):
            payload = opened
        case .failed:
            return .failure(ReadFailure(rejection: .frameAuthenticationFailed, reason: "frame failed to open: forged, replayed, reordered or sealed with another key"))
        case .sealedButNoSecret:
            return .failure(ReadFailure(
                rejection: .handshakeRefused, reason: "this node holds no cluster secret, and the handshake it received was sealed with one: give both the same secret, or neither", refuse: true))
        case .sealedWithAnotherSecret:
            return .failure(ReadFailure(
                rejection: .authenticationFailed, reason: Self.differentSecretsRefusal, refuse: true))
        }
        let handWritten = WireCodec.decode(payload)
        // A message in the codec's own form has its shape from its form: the most
        // frequent frames skip the scan, with the verdict it would give.
        if let handWritten, let verdict = WireCodec.shapeViolation(of: handWritten, within: limits.json) {
            guard let violation = verdict else { return .success(handWritten) }
            return .failure(ReadFailure(rejection: violation.rejection, reason: "protocol violation: \(violation)"))
        }
        do {
            try limits.json.check(payload)
        } catch {
            return .failure(ReadFailure(rejection: error.rejection, reason: "protocol violation: \(error)"))
        }
        if let handWritten { return .success(handWritten) }
        do {
            return .success(try decoder.decode(WireMessage.self, from: Data(payload)))
        } catch {
            return .failure(ReadFailure(rejection: .malformedFrame, reason: "protocol violation: \(Self.describe(error))"))
        }
    }


    private static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context), DecodingError.typeMismatch(_, let context),
             DecodingError.keyNotFound(_, let context), DecodingError.valueNotFound(_, let context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return path.isEmpty ? context.debugDescription : "\(path): \(context.debugDescription)"
        default:
            return "\(error)"
        }
    }
}
