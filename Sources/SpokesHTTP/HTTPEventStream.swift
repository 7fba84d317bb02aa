import Synchronization

/// A Server-Sent Events stream: a handler returns it in ``HTTPResponse/eventStream(_:headers:)``
/// and keeps sending events into it, from any task or thread, until it ends.
///
/// The producer side never blocks: `send` formats the event and queues it, and wakes the
/// serving connection, whose task writes queued events to the stream. The queue is bounded by
/// `maxQueuedBytes`: a client that does not read fills it, and the stream then ends
/// (``Termination/queueFull``) and drops its queue, so a stuck browser tab cannot grow
/// memory. Sends after the end do nothing and return false.
///
/// ``onTermination`` runs exactly once, when the stream ends for any reason: finished,
/// client gone, queue full, write failed, server stopped, or not served at all (the request
/// was `HEAD`, or the server was at `maxStreams`). It runs on the connection's task once
/// the connection lets go of the stream (on the handler's task if the connection was gone
/// before the handler returned), never inside `send` or `finish`, so it may take the
/// producer's own locks. Set it before returning the response.
public final class HTTPEventStream: Sendable {
    /// Why a stream ended.
    public enum Termination: Sendable, Hashable {
        /// The producer called ``finish()``; everything queued before was sent.
        case finished
        /// The client closed the connection.
        case clientDisconnected
        /// More than `maxQueuedBytes` waited to be sent: the client is not reading.
        case queueFull
        /// The socket refused a write, or the client took longer than `writeTimeout`.
        case writeFailed
        /// ``HTTPServer/stop()`` ended it.
        case serverStopped
        /// It was never streamed: the request was `HEAD`, the server refused a stream over
        /// `maxStreams`, or the connection ended before the handler returned.
        case notServed
    }

    /// Most bytes of formatted events that may wait to be sent.
    public let maxQueuedBytes: Int

    private struct State {
        var chunks: [[UInt8]] = []
        var queuedBytes = 0
        /// Set once no more sends are accepted; the consumer stops when it sees it.
        var ending: Termination?
        /// Wakes the serving connection, while one serves this stream.
        var wake: (@Sendable () -> Void)?
        /// True while a wake-up is on its way and not yet taken, so a burst of
        /// sends writes one byte, not one each.
        var wakePending = false
        var termination: Termination?
        var onTermination: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())

    public init(maxQueuedBytes: Int = 1 << 20) {
        self.maxQueuedBytes = maxQueuedBytes
    }

    /// Queues one event: an `event:` line when `event` is given, an `id:` line when `id`
    /// is, one `data:` line per line of `data`, and the blank line that dispatches it.
    /// False when the stream has ended (or ends now because its queue is full).
    @discardableResult
    public func send(event: String? = nil, data: String, id: String? = nil) -> Bool {
        enqueue(Self.encodeEvent(event: event, data: data, id: id))
    }

    /// Queues a comment, which clients ignore: useful as a heartbeat.
    @discardableResult
    public func sendComment(_ text: String) -> Bool {
        enqueue(Self.encodeComment(text))
    }

    /// Ends the stream once what is queued has been sent. Idempotent.
    public func finish() {
        end(.finished)
    }

    /// Runs once when the stream ends; see the type's documentation. Setting it after the
    /// stream has ended runs it at once.
    public var onTermination: (@Sendable () -> Void)? {
        get { state.withLock { $0.onTermination } }
        set {
            let runNow: (@Sendable () -> Void)? = state.withLock { state in
                guard state.termination == nil else { return newValue }
                state.onTermination = newValue
                return nil
            }
            runNow?()
        }
    }

    /// Why the stream ended, once it has.
    public var termination: Termination? { state.withLock { $0.termination } }

    /// True until the stream stops accepting events.
    public var isActive: Bool { state.withLock { $0.ending == nil } }

    private func enqueue(_ chunk: [UInt8]) -> Bool {
        state.withLock { state in
            guard state.ending == nil else { return false }
            state.queuedBytes += chunk.count
            if state.queuedBytes > maxQueuedBytes {
                state.ending = .queueFull
                state.chunks = []
                state.queuedBytes = 0
            } else {
                state.chunks.append(chunk)
            }
            Self.wake(&state)
            return state.ending == nil
        }
    }

    /// Marks the stream as ending for `reason` (unless it already is) and wakes its
    /// connection. The connection sends what is queued when `reason` is `finished`.
    func end(_ reason: Termination) {
        state.withLock { state in
            guard state.ending == nil else { return }
            state.ending = reason
            Self.wake(&state)
        }
    }

    /// Wakes the serving connection, unless a wake-up is already pending. Under the
    /// lock, so a wake-up never reaches a connection after ``detach(_:)``; the wake-up
    /// only queues (it never runs the connection's code here).
    private static func wake(_ state: inout State) {
        guard let wake = state.wake, !state.wakePending else { return }
        state.wakePending = true
        wake()
    }

    /// Connects the stream to its serving connection, which `wake` wakes when events are
    /// queued or the stream ends.
    func attach(wake: @escaping @Sendable () -> Void) {
        state.withLock { state in
            state.wake = wake
            state.wakePending = false
            if !state.chunks.isEmpty || state.ending != nil { Self.wake(&state) }
        }
    }

    /// Takes every queued chunk, and says whether the stream is ending. A send racing with
    /// this call either lands in this batch or wakes the connection again.
    func takeChunks() -> (chunks: [[UInt8]], ending: Termination?) {
        state.withLock { state in
            state.wakePending = false
            defer {
                state.chunks = []
                state.queuedBytes = 0
            }
            return (state.chunks, state.ending)
        }
    }

    /// Ends the stream for good: forgets the connection's wake-up and the queue, records
    /// why it ended (the first reason given to ``end(_:)`` wins), and runs
    /// ``onTermination`` if it has not run.
    func detach(_ reason: Termination) {
        let handler: (@Sendable () -> Void)? = state.withLock { state in
            state.wake = nil
            state.chunks = []
            state.queuedBytes = 0
            state.ending = state.ending ?? reason
            guard state.termination == nil else { return nil }
            state.termination = state.ending
            defer { state.onTermination = nil }
            return state.onTermination
        }
        handler?()
    }

    /// One event in the SSE wire format. Line breaks (CRLF, CR or LF) in `data` start a new
    /// `data:` line, as the client splits them; in `event` and `id`, where they would end
    /// the field early, they become spaces (and NUL is dropped from `id`, which clients
    /// would otherwise ignore).
    static func encodeEvent(event: String?, data: String, id: String?) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(data.utf8.count + 32)
        if let event {
            bytes += "event: ".utf8
            bytes += singleLine(event)
            bytes.append(HTTPSyntax.lf)
        }
        if let id {
            bytes += "id: ".utf8
            bytes += singleLine(id).filter { $0 != 0 }
            bytes.append(HTTPSyntax.lf)
        }
        for line in lines(data) {
            bytes += "data: ".utf8
            bytes += line
            bytes.append(HTTPSyntax.lf)
        }
        bytes.append(HTTPSyntax.lf)
        return bytes
    }

    /// A comment: one `: ` line per line of `text`, then a blank line. The blank line
    /// dispatches nothing (every event before it ended with its own), but makes each chunk
    /// a complete message, as proxies and test clients that read whole messages expect.
    static func encodeComment(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = lines(text).reduce(into: []) { bytes, line in
            bytes += ": ".utf8
            bytes += line
            bytes.append(HTTPSyntax.lf)
        }
        bytes.append(HTTPSyntax.lf)
        return bytes
    }

    /// The lines of `text` split at CRLF, CR or LF; an empty text is one empty line.
    private static func lines(_ text: String) -> [ArraySlice<UInt8>] {
        let bytes = Array(text.utf8)
        var lines: [ArraySlice<UInt8>] = []
        var lineStart = 0
        var index = 0
        while index < bytes.count {
            switch bytes[index] {
            case HTTPSyntax.cr:
                lines.append(bytes[lineStart..<index])
                index += index + 1 < bytes.count && bytes[index + 1] == HTTPSyntax.lf ? 2 : 1
                lineStart = index
            case HTTPSyntax.lf:
                lines.append(bytes[lineStart..<index])
                index += 1
                lineStart = index
            default:
                index += 1
            }
        }
        lines.append(bytes[lineStart...])
        return lines
    }

    private static func singleLine(_ text: String) -> [UInt8] {
        text.utf8.map { $0 == HTTPSyntax.cr || $0 == HTTPSyntax.lf ? HTTPSyntax.space : $0 }
    }
}
