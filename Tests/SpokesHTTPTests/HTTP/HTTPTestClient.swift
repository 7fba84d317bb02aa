import SpokesConcurrency
import Foundation
import Synchronization
@testable import SpokesHTTP
@testable import SpokesTransport

/// A hand-driven HTTP client for the live server tests: it sends exactly the bytes a test
/// gives it (a request cut anywhere, pipelined, dribbled) and reads responses as bytes.
/// Every blocking socket call runs on a thread of its own (``onOwnThread(_:)``), never on
/// the cooperative pool; every read has a deadline.
final class HTTPTestClient: Sendable {
    /// One response as read off the wire.
    struct Response: Sendable {
        var status: Int
        var headers: HTTPHeaders
        var body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    let fd: Int32
    /// True once closed. Held while sending, so a send that races with ``close()`` (a
    /// dribbling task's, say) never writes to the descriptor number after it was closed,
    /// when the next test's socket may have it.
    private let closed = Mutex(false)
    /// Bytes received and not yet returned: responses may arrive together.
    private let received = Mutex<[UInt8]>([])

    private init(fd: Int32) {
        self.fd = fd
    }

    /// Connects to `address`; a small `receiveBuffer` makes a client that never reads fill up fast.
    static func connect(to address: SocketAddress, receiveBuffer: Int32? = nil) async throws -> HTTPTestClient {
        try await onOwnThread {
            guard var size = receiveBuffer else { return HTTPTestClient(fd: try Socket.connect(to: address, timeout: 2)) }
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            var remote = address.sockaddr
            let result = withUnsafePointer(to: &remote) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard result == 0 else { throw TransportError.socketFailed(operation: "connect to", address: "\(address)", errno: errno) }
            return HTTPTestClient(fd: fd)
        }
    }

    /// Sends `bytes`; false once the server has closed the connection.
    @discardableResult
    func send(_ bytes: [UInt8]) async -> Bool {
        (try? await onOwnThread {
            self.closed.withLock { closed in !closed && Socket.sendAll(self.fd, bytes) }
        }) ?? false
    }

    @discardableResult
    func send(_ text: String) async -> Bool {
        await send(Array(text.utf8))
    }

    /// The next response: its head, then `Content-Length` bytes of body (none when
    /// `bodyless`, as for HEAD, or for an event stream, whose events `readEvents` reads).
    /// Nil if the connection closes or the response is not complete within `timeout`.
    func readResponse(bodyless: Bool = false, timeout: Double = 2) async -> Response? {
        try? await onOwnThread {
            let deadline = RealClock().now + timeout
            guard let head = self.readUntil("\r\n\r\n", deadline: deadline) else { return nil }
            let lines = String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n").filter { !$0.isEmpty }
            let statusLine = lines.first?.split(separator: " ") ?? []
            guard statusLine.count >= 2, statusLine[0] == "HTTP/1.1", let status = Int(statusLine[1]) else { return nil }
            var headers = HTTPHeaders()
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { return nil }
                headers.add(name: String(line[..<colon]), value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            }
            var body: [UInt8] = []
            if !bodyless, let length = headers.first("Content-Length").flatMap(Int.init) {
                guard let bytes = self.read(count: length, deadline: deadline) else { return nil }
                body = bytes
            }
            return Response(status: status, headers: headers, body: body)
        }
    }

    /// The next `count` Server-Sent Events, each as its text without the blank line that
    /// ends it (comments included, as they come); nil on close or timeout.
    func readEvents(_ count: Int, timeout: Double = 2) async -> [String]? {
        try? await onOwnThread {
            let deadline = RealClock().now + timeout
            var events: [String] = []
            while events.count < count {
                guard let event = self.readUntil("\n\n", deadline: deadline) else { return nil }
                events.append(String(decoding: event.dropLast(2), as: UTF8.self))
            }
            return events
        }
    }

    /// True once the server closes the connection (reads end), false if it stays open for
    /// `timeout`. Bytes read meanwhile are dropped.
    func closedByServer(within timeout: Double = 2) async -> Bool {
        (try? await onOwnThread {
            let deadline = RealClock().now + timeout
            var buffer = [UInt8](repeating: 0, count: 4096)
            while RealClock().now < deadline {
                guard let count = self.receive(into: &buffer, deadline: deadline) else { return true }
                _ = count
            }
            return false
        }) ?? false
    }

    func close() {
        guard !closed.withLock({ closed in defer { closed = true }; return closed }) else { return }
        Glibc.close(fd)
    }

    /// Bytes up to and including `terminator`, from what was received and then the socket.
    private func readUntil(_ terminator: String, deadline: Double) -> [UInt8]? {
        let marker = Array(terminator.utf8)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let found: [UInt8]? = received.withLock { bytes in
                guard let range = bytes.firstRange(of: marker) else { return nil }
                defer { bytes.removeSubrange(..<range.upperBound) }
                return Array(bytes[..<range.upperBound])
            }
            if let found { return found }
            guard let count = receive(into: &buffer, deadline: deadline), count > 0 else { return nil }
            received.withLock { $0 += buffer[..<count] }
        }
    }

    private func read(count: Int, deadline: Double) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let done: [UInt8]? = received.withLock { bytes in
                guard bytes.count >= count else { return nil }
                defer { bytes.removeFirst(count) }
                return Array(bytes[..<count])
            }
            if let done { return done }
            guard let got = receive(into: &buffer, deadline: deadline), got > 0 else { return nil }
            received.withLock { $0 += buffer[..<got] }
        }
    }

    /// One `recv` within `deadline`: the count (0 when the deadline passed first), or nil
    /// when the connection ended.
    private func receive(into buffer: inout [UInt8], deadline: Double) -> Int? {
        while true {
            let remaining = deadline - RealClock().now
            guard remaining > 0 else { return 0 }
            var time = timeval(tv_sec: Int(remaining), tv_usec: min(999_999, Int((remaining - Double(Int(remaining))) * 1_000_000) + 1))
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 { return count }
            if count == 0 { return nil }
            if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { continue }
            return nil
        }
    }
}

/// Runs blocking work on a thread of its own (see ``runBlocking(_:_:)``).
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await runBlocking("spokes.test.http-client", body)
}
