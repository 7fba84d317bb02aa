import SpokesTransport
import Synchronization

/// An HTTP client on a ``SimulatedNetwork``: it writes what a test sends and collects
/// what it reads, and knows whether the server ended the stream. For servers that run
/// on a runtime's network (the dashboard's `HTTPServer`) in virtual time.
public final class SimulatedHTTPClient: Sendable {
    public let stream: any ByteStream
    private let state = Mutex<(bytes: [UInt8], ended: Bool)>(([], false))

    /// Connects from `host` of `network` to `address`.
    public static func connect(on network: SimulatedNetwork, from host: String, to address: SocketAddress) async throws -> SimulatedHTTPClient {
        SimulatedHTTPClient(try await network.host(host).connect(to: address, timeout: 1))
    }

    init(_ stream: any ByteStream) {
        self.stream = stream
        stream.startReading(onBytes: { [self] bytes in
            state.withLock { $0.bytes += bytes }
            return true
        }, onEnd: { [self] _ in state.withLock { $0.ended = true } })
    }

    /// Sends `text`'s bytes.
    public func send(_ text: String) { _ = stream.write(Array(text.utf8)) }

    /// Everything read so far, as text.
    public var text: String { String(decoding: state.withLock { $0.bytes }, as: UTF8.self) }

    /// True once the server ended the stream.
    public var ended: Bool { state.withLock { $0.ended } }

    /// The status codes of the HTTP/1.1 responses read so far, in order.
    public var statuses: [Int] {
        text.components(separatedBy: "HTTP/1.1 ").dropFirst().compactMap { Int($0.prefix(3)) }
    }

    /// A `GET` of `path` with a `Host` header.
    public static func get(_ path: String, host: String = "127.0.0.1") -> String {
        "GET \(path) HTTP/1.1\r\nHost: \(host)\r\n\r\n"
    }
}
