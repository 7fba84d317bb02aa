import FoundationEssentials
import Glibc
import SpokesConcurrency
import SpokesTransport
import Synchronization

/// One client connection of an ``HTTPServer``, on a ``ByteStream`` of the server's
/// network: bytes arrive through the stream's reader (a thread of the socket's own, or
/// the simulator's task) and feed the parser; each request is served on a task of its own
/// (the handler, then the write), one at a time, in order; deadlines are timers on the
/// server's clock. So the same connection runs on sockets and in the simulator, and
/// nothing here blocks a thread of the cooperative pool (a write the socket does not take
/// at once waits on a thread of its own, under `writeTimeout`).
///
/// The connection's life, one ``Phase`` at a time: `reading` (a request arriving, or idle
/// between keep-alive requests; `headerTimeout` or `idleTimeout` runs), `serving` (a task
/// answers a request), `streaming` (a task writes an event stream), `lingering` (the last
/// response was written and the sending side shut; what the client still sends is read
/// and dropped for at most ``lingerSeconds``), `closing`. The stream is closed, and the
/// connection released from its server, once reading has ended and no task writes: the
/// ``ByteStream`` contract.
final class HTTPServerConnection: Sendable {
    let id: Int
    let stream: any ByteStream
    var remoteAddress: SocketAddress { stream.remoteAddress }

    /// Longest wait for the client to close after the server's last response, and most
    /// bytes read meanwhile: closing while the client's bytes are unread would send a
    /// reset, which can destroy the response before the client reads it.
    static let lingerSeconds = 5.0
    static let lingerBytes = 64 * 1024

    private enum Phase {
        case reading, serving, streaming, lingering, closing
    }

    /// What wakes a stream's task: events queued (or the stream ending), the keep-alive
    /// timer, or the client leaving.
    private enum StreamWake: Sendable {
        case events, keepAlive, clientLeft
    }

    private struct State {
        var parser: HTTPRequestParser
        var phase = Phase.reading
        /// When the request now arriving began: at the connection's opening for the first
        /// one, then at its first byte. Nil while idle between requests.
        var requestStarted: Double?
        var idleSince: Double
        /// The deadline timer of the reading phase and the deadline it was armed for.
        var deadline: (at: Double, timer: ClockTimer)?
        var lingerTimer: ClockTimer?
        var lingerDrained = 0
        var readEnded = false
        var released = false
        var aborted = false
        /// The running handler, so that ``abort()`` cancels it and stops waiting.
        var handler: (task: Task<Void, Never>, outcome: HandlerOutcome)?
        var eventStream: HTTPEventStream?
        var streamWakes: AsyncStream<StreamWake>.Continuation?
    }

    private let state: Mutex<State>
    private let server: HTTPServer

    /// Where its timeouts and `Date` headers are read: its server's clock.
    private var clock: any RuntimeClock { server.clock }
    private var limits: HTTPLimits { server.limits }

    init(id: Int, stream: any ByteStream, server: HTTPServer) {
        self.id = id
        self.stream = stream
        self.server = server
        let now = server.clock.now
        state = Mutex(State(parser: HTTPRequestParser(limits: server.limits), requestStarted: now, idleSince: now))
    }

    /// Now, for a response's `Date` header.
    private var date: Date { Date(timeIntervalSince1970: clock.unixNow) }

    /// Starts the header deadline and reading.
    func start() {
        if limits.sendBufferBytes > 0 { stream.limitWriteBuffer(toBytes: limits.sendBufferBytes) }
        state.withLock { rearmDeadline(&$0) }
        stream.startReading(onBytes: { [self] in received($0) }, onEnd: { [self] _ in readingEnded() })
    }

    /// From ``HTTPServer/stop()``, after the stream was shut down: cancels a running
    /// handler and stops waiting for it, and ends a stream being served.
    func abort() {
        let (handler, eventStream) = state.withLock { state in
            state.aborted = true
            return (state.handler, state.eventStream)
        }
        handler?.task.cancel()
        handler?.outcome.abandon()
        eventStream?.end(.serverStopped)
    }

    // MARK: - Reading

    /// The reader's bytes: fed to the parser (or dropped while streaming or lingering).
    /// False stops reading: enough lingered, or more bytes queued behind the request being
    /// served than one whole request may have (a client that sends without reading).
    private func received(_ bytes: ArraySlice<UInt8>) -> Bool {
        let (more, advances) = state.withLock { state -> (Bool, Bool) in
            switch state.phase {
            case .lingering:
                state.lingerDrained += bytes.count
                return (state.lingerDrained < Self.lingerBytes, false)
            case .streaming:
                // The client sends nothing on an event stream; stray bytes are dropped.
                return (true, false)
            case .closing:
                return (false, false)
            case .reading, .serving:
                state.parser.feed(bytes)
                if state.phase == .serving {
                    return (state.parser.bufferedByteCount <= limits.maxHeaderBytes + limits.maxBodyBytes, false)
                }
                // The header deadline now counts from this first byte (``advance()`` rearms it).
                if state.requestStarted == nil { state.requestStarted = clock.now }
                return (true, true)
            }
        }
        if advances { advance() }
        return more
    }

    private func readingEnded() {
        let wakes: AsyncStream<StreamWake>.Continuation? = state.withLock { state in
            state.readEnded = true
            state.deadline?.timer.cancel()
            state.deadline = nil
            return state.phase == .streaming ? state.streamWakes : nil
        }
        wakes?.yield(.clientLeft)
        // In the reading phase: serves what is already buffered, then closes.
        advance()
        releaseIfDone()
    }

    /// In the reading phase: starts serving the next whole request (or refusing bad
    /// bytes), or sends `100 Continue`, or arms the deadline and waits for more bytes;
    /// closes once reading ended with nothing more to serve.
    private func advance() {
        enum Next { case serve(HTTPRequest), refuse(HTTPParseError), sendContinue, close }
        let next = state.withLock { state -> Next? in
            guard state.phase == .reading else { return nil }
            var next: Next?
            do throws(HTTPParseError) {
                if let request = try state.parser.nextRequest() {
                    next = .serve(request)
                } else if state.parser.shouldSendContinue() {
                    next = .sendContinue
                } else if state.readEnded || state.aborted {
                    next = .close
                }
            } catch {
                next = .refuse(error)
            }
            guard let next else {
                // Still reading: the deadline stays, or moves if the request began now.
                rearmDeadline(&state)
                return nil
            }
            state.deadline?.timer.cancel()
            state.deadline = nil
            switch next {
            case .close: state.phase = .closing
            case .serve, .refuse, .sendContinue: state.phase = .serving
            }
            return next
        }
        guard let next else { return }
        switch next {
        case .close:
            stream.shutdown()
            releaseIfDone()
        case .serve(let request):
            Task { await serve(request) }
        case .refuse(let error):
            server.count(HTTPRefusal(error))
            Task { await answerAndClose(HTTPResponse.text("\(error)\n", status: error.status)) }
        case .sendContinue:
            Task {
                guard await write(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) else { return close() }
                backToReading()
            }
        }
    }

    /// Arms the reading phase's deadline: `headerTimeout` after a request began, else
    /// `idleTimeout` after the last response. Under the lock.
    private func rearmDeadline(_ state: inout State) {
        let at = state.requestStarted.map { $0 + limits.headerTimeout } ?? state.idleSince + limits.idleTimeout
        if let armed = state.deadline, armed.at == at { return }
        state.deadline?.timer.cancel()
        let timer = clock.startTimer(after: max(0, at - clock.now)) { [self] in deadlinePassed(at) }
        state.deadline = (at, timer)
    }

    /// The deadline armed for `at` passed: a silent connection is closed without an
    /// answer (it asked nothing); one in the middle of a request is answered `408`.
    private func deadlinePassed(_ at: Double) {
        let partial: Bool? = state.withLock { state in
            guard state.phase == .reading, let armed = state.deadline, armed.at == at else { return nil }
            state.deadline = nil
            state.phase = state.parser.hasPartialRequest ? .serving : .closing
            return state.phase == .serving
        }
        switch partial {
        case nil:
            return
        case false?:
            stream.shutdown()
            releaseIfDone()
        case true?:
            server.count(.requestTimeout)
            let reason = "408 Request Timeout: the request did not arrive within \(limits.headerTimeout) seconds\n"
            Task { await answerAndClose(HTTPResponse.text(reason, status: .requestTimeout)) }
        }
    }

    /// After a response on a kept connection: reading again, and the next request served.
    private func backToReading() {
        state.withLock { state in
            state.phase = .reading
            state.idleSince = clock.now
            state.requestStarted = state.parser.hasPartialRequest ? state.idleSince : nil
        }
        advance()
    }

    // MARK: - Requests

    /// Answers `request` (on its own task), then reads on or closes.
    private func serve(_ request: HTTPRequest) async {
        if let refusal = server.beginRequest(on: self) {
            // Crowded out meanwhile: its stream is shut down, there is no one to answer.
            guard refusal != .crowdedOut else { return close() }
            let reason = refusal == .tooManyConnections ? "too many requests in progress" : "too many requests in progress from your address"
            var response = HTTPResponse.text("503 Service Unavailable: \(reason); try again shortly\n", status: .serviceUnavailable)
            response.headers.add(name: "Retry-After", value: "1")
            return await answerAndClose(response)
        }
        var request = request
        request.remoteAddress = remoteAddress
        guard let response = await callHandler(request) else { return close() }
        if let eventStream = response.stream {
            return await serveStream(eventStream, response: response, request: request)
        }
        let keepAlive = request.keepAlive && !response.asksToClose && !server.isStopped
        guard await write(response.serialized(for: request, keepAlive: keepAlive, date: date)) else { return close() }
        if keepAlive {
            server.endRequest(on: self)
            backToReading()
        } else {
            lingeringClose()
        }
    }

    /// Sends a final `response` (to bytes that were not a valid request, or a refusal),
    /// then closes.
    private func answerAndClose(_ response: HTTPResponse) async {
        guard await write(response.serialized(for: nil, keepAlive: false, date: date)) else { return close() }
        lingeringClose()
    }

    /// Runs the async handler on a task of its own and waits for its answer; nil if the
    /// server stopped meanwhile (then it is cancelled and no longer waited for). A
    /// response that arrives after the connection gave up on it has its event stream, if
    /// any, ended as not served.
    private func callHandler(_ request: HTTPRequest) async -> HTTPResponse? {
        let outcome = HandlerOutcome()
        let handler = server.handler
        let started = state.withLock { state in
            guard !state.aborted else { return false }
            let task = Task {
                let response = await handler(request)
                if !outcome.deliver(response) { response.stream?.detach(.notServed) }
            }
            state.handler = (task, outcome)
            return true
        }
        guard started else { return nil }
        let response = await outcome.response()
        state.withLock { $0.handler = nil }
        return response
    }

    // MARK: - Event streams

    /// Sends the head, then the stream's events as they come, a comment every
    /// `streamKeepAlive` of silence, until the stream or the connection ends.
    private func serveStream(_ eventStream: HTTPEventStream, response: HTTPResponse, request: HTTPRequest) async {
        guard request.method != .head else {
            _ = await write(response.serialized(for: request, keepAlive: false, date: date))
            eventStream.detach(.notServed)
            return close()
        }
        guard server.admitStream() else {
            eventStream.detach(.notServed)
            return await answerAndClose(HTTPResponse.text("503 Service Unavailable: too many event streams are open\n", status: .serviceUnavailable))
        }
        let (wakes, continuation) = AsyncStream.makeStream(of: StreamWake.self, bufferingPolicy: .unbounded)
        let (aborted, clientGone) = state.withLock { state in
            state.phase = .streaming
            state.eventStream = eventStream
            state.streamWakes = continuation
            return (state.aborted, state.readEnded)
        }
        if aborted { eventStream.end(.serverStopped) }
        if clientGone { continuation.yield(.clientLeft) }
        eventStream.attach { continuation.yield(.events) }
        let reason = await pump(eventStream, head: response.serialized(for: request, keepAlive: false, date: date), wakes: wakes, continuation: continuation)
        eventStream.detach(reason)
        continuation.finish()
        state.withLock { state in
            state.eventStream = nil
            state.streamWakes = nil
        }
        server.streamEnded()
        if reason == .finished { lingeringClose() } else { close() }
    }

    /// Writes the stream until it ends; returns why it ended.
    private func pump(_ eventStream: HTTPEventStream, head: [UInt8], wakes: AsyncStream<StreamWake>,
                      continuation: AsyncStream<StreamWake>.Continuation) async -> HTTPEventStream.Termination {
        let keepAlive = limits.streamKeepAlive
        guard await write(head) else { return .writeFailed }
        var keepAliveTimer = clock.startTimer(after: keepAlive) { continuation.yield(.keepAlive) }
        defer { keepAliveTimer.cancel() }
        var lastWrite = clock.now
        /// Takes what is queued and writes it; the stream's end, if it ends.
        func writeQueued() async -> HTTPEventStream.Termination? {
            let (chunks, ending) = eventStream.takeChunks()
            switch ending {
            case .queueFull:
                server.count(.streamQueueFull)
                return .queueFull
            case .serverStopped:
                return .serverStopped
            default:
                break
            }
            if !chunks.isEmpty {
                guard await write(Array(chunks.joined())) else { return .writeFailed }
                lastWrite = clock.now
            }
            return ending
        }
        if let ending = await writeQueued() { return ending }
        for await wake in wakes {
            switch wake {
            case .clientLeft:
                return server.isStopped ? .serverStopped : .clientDisconnected
            case .events:
                if let ending = await writeQueued() { return ending }
            case .keepAlive:
                if clock.now - lastWrite >= keepAlive {
                    guard await write(HTTPEventStream.encodeComment("keep-alive")) else { return .writeFailed }
                    lastWrite = clock.now
                }
            }
            keepAliveTimer.cancel()
            keepAliveTimer = clock.startTimer(after: max(0, lastWrite + keepAlive - clock.now)) { continuation.yield(.keepAlive) }
        }
        return .serverStopped
    }

    // MARK: - Writing and closing

    /// Writes all of `bytes`; false (and counted when it timed out) if the client did not
    /// take them within `writeTimeout` or the stream broke. What a socket takes at once is
    /// written in place; the rest waits on a thread of its own, and the stream is shut
    /// down when `writeTimeout` passes first, which ends that wait.
    private func write(_ bytes: [UInt8]) async -> Bool {
        guard stream.writesWait else { return stream.write(bytes) }
        guard let written = stream.writeWithoutWaiting(bytes) else { return false }
        if written == bytes.count { return true }
        let rest = Array(bytes[written...])
        let timedOut = Atomic<Bool>(false)
        let stream = stream
        let timer = clock.startTimer(after: limits.writeTimeout) {
            timedOut.store(true, ordering: .releasing)
            stream.shutdown()
        }
        let wrote = await runBlocking("spokes.http.write") { stream.write(rest) }
        timer.cancel()
        if timedOut.load(ordering: .acquiring) {
            server.count(.writeTimeout)
            return false
        }
        return wrote
    }

    /// Ends the sending side, then reads (and drops) what the client still sends until it
    /// closes, for at most ``lingerSeconds`` and ``lingerBytes``.
    private func lingeringClose() {
        let stream = stream
        let ended = state.withLock { state in
            state.phase = .lingering
            if !state.readEnded {
                state.lingerTimer = clock.startTimer(after: Self.lingerSeconds) { stream.shutdown() }
            }
            return state.readEnded
        }
        stream.shutdownWriting()
        if ended { releaseIfDone() }
    }

    /// Closes at once: the stream shut down, released once reading ends.
    private func close() {
        state.withLock { $0.phase = .closing }
        stream.shutdown()
        releaseIfDone()
    }

    /// Once reading has ended and no task writes any more: cancels the timers, closes the
    /// stream (through ``HTTPServer/release(_:)``), once.
    private func releaseIfDone() {
        let releases = state.withLock { state in
            guard state.readEnded, !state.released, state.phase == .lingering || state.phase == .closing else { return false }
            state.released = true
            state.lingerTimer?.cancel()
            state.deadline?.timer.cancel()
            state.deadline = nil
            return true
        }
        if releases { server.release(self) }
    }
}

/// Where a handler's task leaves its response for the connection, which may have stopped
/// waiting (the server stopped): then the response is not delivered, and the task knows
/// it must end the stream it carries.
private final class HandlerOutcome: Sendable {
    private struct State {
        var response: HTTPResponse?
        /// Set once the response was taken or the connection stopped waiting.
        var settled = false
        var waiter: CheckedContinuation<HTTPResponse?, Never>?
    }

    private let state = Mutex(State())

    /// Leaves `response`; false if the connection has stopped waiting.
    func deliver(_ response: HTTPResponse) -> Bool {
        let outcome: (delivered: Bool, waiter: CheckedContinuation<HTTPResponse?, Never>?) = state.withLock { state in
            guard !state.settled else { return (false, nil) }
            guard let waiter = state.waiter else {
                state.response = response
                return (true, nil)
            }
            state.waiter = nil
            state.settled = true
            return (true, waiter)
        }
        outcome.waiter?.resume(returning: response)
        return outcome.delivered
    }

    /// The response once delivered, or nil once abandoned.
    func response() async -> HTTPResponse? {
        await withCheckedContinuation { continuation in
            let now: HTTPResponse?? = state.withLock { state in
                if let response = state.response {
                    state.response = nil
                    state.settled = true
                    return .some(response)
                }
                if state.settled { return .some(nil) }
                state.waiter = continuation
                return nil
            }
            if let now { continuation.resume(returning: now) }
        }
    }

    /// Stops waiting: the waiter gets nil, and a response delivered but not yet taken (or
    /// delivered later) has its event stream ended as not served.
    func abandon() {
        let (waiter, untaken) = state.withLock { state -> (CheckedContinuation<HTTPResponse?, Never>?, HTTPResponse?) in
            guard !state.settled else { return (nil, nil) }
            state.settled = true
            defer {
                state.waiter = nil
                state.response = nil
            }
            return (state.waiter, state.response)
        }
        waiter?.resume(returning: nil)
        untaken?.stream?.detach(.notServed)
    }
}
