import SpokesTransport
import Foundation
import SpokesConcurrency
import Synchronization

/// One client connection of an ``HTTPServer``, served on its own thread from accept to
/// close: read (under `headerTimeout` or `idleTimeout`), parse, run the handler, write
/// (under `writeTimeout`), and again while the client keeps the connection alive. An
/// event stream keeps the thread until the stream ends.
///
/// Only this thread reads, writes and closes the descriptor (the close through
/// ``HTTPServer/release(_:)``). Other threads touch the connection only through
/// ``abort()``, which never uses the descriptor.
final class HTTPServerConnection: Sendable {
    let id: Int
    let descriptor: Int32
    let remoteAddress: SocketAddress

    /// Longest wait for the client to close after the server's last response, and most
    /// bytes read meanwhile: closing while the client's bytes are unread would send a
    /// reset, which can destroy the response before the client reads it.
    private static let lingerSeconds = 5.0
    private static let lingerBytes = 64 * 1024
    private static let readSize = 16 * 1024

    private struct State {
        var aborted = false
        var handlerTask: Task<Void, Never>?
        var handlerDone: DispatchSemaphore?
        var stream: HTTPEventStream?
    }

    private let state = Mutex(State())

    /// Where its timeouts and `Date` headers are read: its server's clock.
    private let clock: any RuntimeClock

    init(id: Int, descriptor: Int32, remoteAddress: SocketAddress, clock: any RuntimeClock) {
        self.id = id
        self.descriptor = descriptor
        self.remoteAddress = remoteAddress
        self.clock = clock
    }

    /// Now, for a response's `Date` header.
    private var date: Date { Date(timeIntervalSince1970: clock.unixNow) }

    func start(server: HTTPServer) {
        let thread = Thread { [self] in
            run(server)
            server.release(self)
        }
        thread.name = "spokes.http.connection"
        thread.start()
    }

    /// From ``HTTPServer/stop()``, after the descriptor was shut down: cancels a running
    /// handler and stops waiting for it, and ends a stream being served.
    func abort() {
        let (task, done, stream) = state.withLock { state in
            state.aborted = true
            return (state.handlerTask, state.handlerDone, state.stream)
        }
        task?.cancel()
        done?.signal()
        stream?.end(.serverStopped)
    }

    // MARK: - Requests

    private func run(_ server: HTTPServer) {
        let limits = server.limits
        if limits.sendBufferBytes > 0 {
            var size = Int32(clamping: limits.sendBufferBytes)
            setsockopt(descriptor, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var parser = HTTPRequestParser(limits: limits)
        var buffer = [UInt8](repeating: 0, count: Self.readSize)
        // When the request now arriving began: at the connection's opening for the first
        // one, then at its first byte. Nil while waiting, idle, between requests.
        var requestStarted: Double? = clock.now
        var idleSince = clock.now
        while true {
            do {
                while let request = try parser.nextRequest() {
                    guard serve(request, server: server) else { return }
                    idleSince = clock.now
                    requestStarted = parser.hasPartialRequest ? idleSince : nil
                }
            } catch {
                server.count(HTTPRefusal(error))
                answerAndClose(HTTPResponse.text("\(error)\n", status: error.status), server: server)
                return
            }
            if parser.shouldSendContinue() {
                guard write(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8), server: server) else { return }
            }
            let deadline = requestStarted.map { $0 + limits.headerTimeout } ?? idleSince + limits.idleTimeout
            switch read(into: &buffer, until: deadline) {
            case .bytes(let count):
                if requestStarted == nil { requestStarted = clock.now }
                parser.feed(buffer[..<count])
            case .closed:
                return
            case .timedOut:
                // A silent connection is closed without an answer: it asked nothing.
                guard parser.hasPartialRequest else { return }
                server.count(.requestTimeout)
                let reason = "408 Request Timeout: the request did not arrive within \(limits.headerTimeout) seconds\n"
                answerAndClose(HTTPResponse.text(reason, status: .requestTimeout), server: server)
                return
            }
        }
    }

    /// Answers `request`; true to keep the connection for another request.
    private func serve(_ request: HTTPRequest, server: HTTPServer) -> Bool {
        if let refusal = server.beginRequest(on: self) {
            // Crowded out meanwhile: its descriptor is shut down, there is no one to answer.
            guard refusal != .crowdedOut else { return false }
            let reason = refusal == .tooManyConnections ? "too many requests in progress" : "too many requests in progress from your address"
            var response = HTTPResponse.text("503 Service Unavailable: \(reason); try again shortly\n", status: .serviceUnavailable)
            response.headers.add(name: "Retry-After", value: "1")
            answerAndClose(response, server: server)
            return false
        }
        var request = request
        request.remoteAddress = remoteAddress
        guard let response = callHandler(request, server: server) else { return false }
        if let stream = response.stream {
            serveStream(stream, response: response, request: request, server: server)
            return false
        }
        let keepAlive = request.keepAlive && !response.asksToClose && !server.isStopped
        guard write(response.serialized(for: request, keepAlive: keepAlive, date: date), server: server) else { return false }
        if keepAlive {
            server.endRequest(on: self)
        } else {
            lingeringClose()
        }
        return keepAlive
    }

    /// Sends a final `response` (to bytes that were not a valid request), then closes.
    private func answerAndClose(_ response: HTTPResponse, server: HTTPServer) {
        guard write(response.serialized(for: nil, keepAlive: false, date: date), server: server) else { return }
        lingeringClose()
    }

    /// Runs the async handler in a task and blocks this thread (never a pool thread)
    /// until it answers; nil if the server stopped meanwhile. A response that arrives after
    /// the connection gave up on it has its event stream, if any, ended as not served.
    private func callHandler(_ request: HTTPRequest, server: HTTPServer) -> HTTPResponse? {
        let outcome = HandlerOutcome()
        let handler = server.handler
        let started = state.withLock { state in
            guard !state.aborted else { return false }
            state.handlerDone = outcome.done
            state.handlerTask = Task {
                let response = await handler(request)
                if !outcome.deliver(response) { response.stream?.detach(.notServed) }
                outcome.done.signal()
            }
            return true
        }
        guard started else { return nil }
        outcome.done.wait()
        state.withLock { state in
            state.handlerTask = nil
            state.handlerDone = nil
        }
        return outcome.take()
    }

    // MARK: - Event streams

    /// Sends the head, then the stream's events as they come, a comment every
    /// `streamKeepAlive` of silence, until the stream or the connection ends.
    private func serveStream(_ stream: HTTPEventStream, response: HTTPResponse, request: HTTPRequest, server: HTTPServer) {
        guard request.method != .head else {
            _ = write(response.serialized(for: request, keepAlive: false, date: date), server: server)
            stream.detach(.notServed)
            return
        }
        var pair: [Int32] = [-1, -1]
        let flags = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        guard server.admitStream() else {
            stream.detach(.notServed)
            let reason = "503 Service Unavailable: too many event streams are open\n"
            answerAndClose(HTTPResponse.text(reason, status: .serviceUnavailable), server: server)
            return
        }
        defer { server.streamEnded() }
        guard socketpair(AF_UNIX, flags, 0, &pair) == 0 else {
            stream.detach(.notServed)
            let reason = "503 Service Unavailable: cannot open an event stream now\n"
            answerAndClose(HTTPResponse.text(reason, status: .serviceUnavailable), server: server)
            return
        }
        let aborted = state.withLock { state in
            state.stream = stream
            return state.aborted
        }
        if aborted { stream.end(.serverStopped) }
        stream.attach(wakeDescriptor: pair[1])
        let reason = pump(stream, head: response.serialized(for: request, keepAlive: false, date: date),
                          wake: pair[0], server: server)
        stream.detach(reason)
        state.withLock { $0.stream = nil }
        close(pair[0])
        close(pair[1])
        if reason == .finished { lingeringClose() }
    }

    /// Writes the stream until it ends; returns why it ended.
    private func pump(_ stream: HTTPEventStream, head: [UInt8], wake: Int32, server: HTTPServer) -> HTTPEventStream.Termination {
        let keepAlive = server.limits.streamKeepAlive
        guard write(head, server: server) else { return .writeFailed }
        var lastWrite = clock.now
        var scratch = [UInt8](repeating: 0, count: 512)
        while true {
            while scratch.withUnsafeMutableBytes({ recv(wake, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }) > 0 {}
            let (chunks, ending) = stream.takeChunks()
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
                guard write(Array(chunks.joined()), server: server) else { return .writeFailed }
                lastWrite = clock.now
            }
            if let ending { return ending }
            let wait = lastWrite + keepAlive - clock.now
            if wait <= 0 {
                guard write(HTTPEventStream.encodeComment("keep-alive"), server: server) else { return .writeFailed }
                lastWrite = clock.now
                continue
            }
            var descriptors = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                               pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&descriptors, 2, Self.milliseconds(wait))
            if ready < 0, errno != EINTR { return .writeFailed }
            if descriptors[0].revents != 0 {
                // The client sends nothing on an event stream: end of file or an error means
                // it left; stray bytes are read and dropped.
                let count = scratch.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                    return server.isStopped ? .serverStopped : .clientDisconnected
                }
            }
        }
    }

    // MARK: - Socket

    private enum ReadResult {
        case bytes(Int)
        case closed
        case timedOut
    }

    private enum WriteResult {
        case written
        case timedOut
        case failed
    }

    /// Waits for bytes until `deadline` (monotonic seconds).
    private func read(into buffer: inout [UInt8], until deadline: Double) -> ReadResult {
        while true {
            let remaining = deadline - clock.now
            guard remaining > 0 else { return .timedOut }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Self.milliseconds(remaining))
            if ready < 0 { if errno == EINTR { continue } else { return .closed } }
            if ready == 0 { continue }
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 { return .bytes(count) }
            if count < 0, errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { continue }
            return .closed
        }
    }

    /// Writes all of `bytes`; false (and counted when it timed out) if the client did not
    /// take them within `writeTimeout` or the connection failed.
    private func write(_ bytes: [UInt8], server: HTTPServer) -> Bool {
        switch write(bytes, timeout: server.limits.writeTimeout) {
        case .written:
            return true
        case .timedOut:
            server.count(.writeTimeout)
            return false
        case .failed:
            return false
        }
    }

    /// Non-blocking sends, waiting in `poll` while the socket is full, all within `timeout`.
    private func write(_ bytes: [UInt8], timeout: Double) -> WriteResult {
        let deadline = clock.now + timeout
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { buffer in
                send(descriptor, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL))
            }
            if sent > 0 {
                offset += sent
                continue
            }
            guard sent < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else { return .failed }
            let remaining = deadline - clock.now
            guard remaining > 0 else { return .timedOut }
            var poller = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            _ = poll(&poller, 1, Self.milliseconds(remaining))
        }
        return .written
    }

    /// Ends the sending side, then reads (and drops) what the client still sends until it
    /// closes, for at most ``lingerSeconds`` and ``lingerBytes``.
    private func lingeringClose() {
        shutdown(descriptor, Int32(SHUT_WR))
        let deadline = clock.now + Self.lingerSeconds
        var buffer = [UInt8](repeating: 0, count: 4096)
        var drained = 0
        while drained < Self.lingerBytes, case .bytes(let count) = read(into: &buffer, until: deadline) {
            drained += count
        }
    }

    /// `seconds` as a `poll` timeout, rounded up so a wait never ends before its deadline.
    private static func milliseconds(_ seconds: Double) -> Int32 {
        max(1, Duration.clamped(seconds: seconds).pollMilliseconds)
    }
}

/// Where a handler's task leaves its response for the connection thread, which may have
/// stopped waiting (the server stopped): then the response is not delivered, and the task
/// knows it must end the stream it carries.
private final class HandlerOutcome: Sendable {
    let done = DispatchSemaphore(value: 0)
    private let state = Mutex<(response: HTTPResponse?, abandoned: Bool)>((nil, false))

    /// Leaves `response`; false if the connection has stopped waiting.
    func deliver(_ response: HTTPResponse) -> Bool {
        state.withLock { state in
            guard !state.abandoned else { return false }
            state.response = response
            return true
        }
    }

    /// The response, or nil (and no later delivery) if there is none yet.
    func take() -> HTTPResponse? {
        state.withLock { state in
            if state.response == nil { state.abandoned = true }
            return state.response
        }
    }
}
