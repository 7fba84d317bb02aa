import Foundation
import Synchronization

/// One TCP connection, carrying framed JSON ``WireMessage``s.
///
/// A dedicated reader thread blocks in `recv` and hands each decoded message to
/// `onMessage`; writes go through a serial dispatch queue of their own, so a slow peer
/// delays only its own connection and no cooperative-pool thread ever blocks on a
/// socket. A frame over the size limit or a message that does not decode is a protocol
/// violation: this connection closes, and nothing else is affected. `onClose` runs
/// exactly once, with the reason.
public final class Connection: Sendable, CustomStringConvertible {
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
    }

    public let remoteAddress: SocketAddress
    /// True on the side that dialled.
    public let isOutbound: Bool
    private let fd: Int32
    private let maximumFrameSize: Int
    private let writes: DispatchQueue
    private let state = Mutex(State())
    /// One encoder for every frame of every connection (JSONEncoder is Sendable and
    /// keeps no state between calls), instead of one allocated per frame.
    private static let encoder = JSONEncoder()
    /// Monotonic time of the last message received, as the bits of a Double.
    private let lastReceivedBits = Atomic<UInt64>(MonotonicClock.now.bitPattern)

    /// Monotonic seconds when the last message arrived (or when the connection opened).
    public var lastReceived: Double { Double(bitPattern: lastReceivedBits.load(ordering: .relaxed)) }

    init(fd: Int32, remoteAddress: SocketAddress, isOutbound: Bool, maximumFrameSize: Int) {
        self.fd = fd
        self.remoteAddress = remoteAddress
        self.isOutbound = isOutbound
        self.maximumFrameSize = maximumFrameSize
        writes = DispatchQueue(label: "spokes.connection.write.\(remoteAddress)")
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

    public var isClosed: Bool { state.withLock { $0.closed } }

    /// Starts reading; messages and the close are reported to `handlers`.
    func start(_ handlers: Handlers) {
        state.withLock { $0.handlers = handlers }
        let thread = Thread { [self] in readLoop() }
        thread.name = "spokes.connection.read"
        thread.start()
    }

    /// Queues `message` for sending; does nothing once closed.
    public func send(_ message: WireMessage) {
        guard !isClosed else { return }
        let bytes: [UInt8]
        do {
            bytes = FrameDecoder.frame(try Self.encoder.encode(message))
        } catch {
            close(reason: "cannot encode \(message): \(error)")
            return
        }
        writes.async { [self] in
            guard !isClosed else { return }
            if !Socket.sendAll(fd, bytes) {
                close(reason: "send failed: \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Sends `message`, then closes: for a last word such as `refused` or `leave`.
    public func send(_ message: WireMessage, thenCloseWithReason reason: String) {
        send(message)
        writes.async { [self] in close(reason: reason) }
    }

    /// Blocks until every write queued so far has been attempted. Call off the cooperative pool.
    func drainWrites() {
        writes.sync {}
    }

    /// Closes the connection (once) and reports `reason` to `onClose`.
    public func close(reason: String) {
        let handlers: Handlers?? = state.withLock { state in
            guard !state.closed else { return .none }
            state.closed = true
            return .some(state.handlers)
        }
        guard case .some(let handlers) = handlers else { return }
        // Wakes the reader thread, which closes the descriptor after pending writes.
        shutdown(fd, Int32(SHUT_RDWR))
        handlers?.onClose(self, reason)
    }

    private func readLoop() {
        var decoder = FrameDecoder(maximumFrameSize: maximumFrameSize)
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let json = JSONDecoder()
        reading: while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                close(reason: count == 0 ? "peer closed the connection" : "receive failed: \(String(cString: strerror(errno)))")
                break
            }
            decoder.feed(buffer[..<count])
            do {
                while let frame = try decoder.nextFrame() {
                    let message: WireMessage
                    do {
                        message = try json.decode(WireMessage.self, from: Data(frame))
                    } catch {
                        close(reason: "protocol violation: \(Self.describe(error))")
                        break reading
                    }
                    lastReceivedBits.store(MonotonicClock.now.bitPattern, ordering: .relaxed)
                    guard let handlers = state.withLock({ $0.closed ? nil : $0.handlers }) else { break reading }
                    handlers.onMessage(self, message)
                }
            } catch {
                close(reason: "protocol violation: \(error)")
                break
            }
        }
        writes.async { [fd] in Glibc.close(fd) }
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
