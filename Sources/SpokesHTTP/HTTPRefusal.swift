/// Why an ``HTTPServer`` turned a client away. Each is counted, by its raw value, in
/// ``HTTPServer/refusals``, for tests and for a status page.
public enum HTTPRefusal: String, Sendable, Hashable, CaseIterable {
    /// A request over `maxConnections` in progress: answered `503` and closed.
    case tooManyConnections = "too_many_connections"
    /// A request over `maxConnectionsPerAddress` in progress from one address: answered `503`.
    case tooManyConnectionsFromAddress = "too_many_connections_per_address"
    /// A connection without a request in progress, closed (the longest without one
    /// first) to make room when `maxIdleConnections` were open.
    case crowdedOut = "crowded_out"
    /// An event stream over `maxStreams`: answered `503`.
    case tooManyStreams = "too_many_streams"
    /// A request that did not arrive within `headerTimeout`: answered `408`.
    case requestTimeout = "request_timeout"
    /// A malformed request: answered `400`.
    case badRequest = "bad_request"
    /// A request line over `maxRequestLineBytes`: answered `414`.
    case uriTooLong = "uri_too_long"
    /// A head over `maxHeaderBytes` or `maxHeaderCount`: answered `431`.
    case headTooLarge = "head_too_large"
    /// A body over `maxBodyBytes`: answered `413`.
    case bodyTooLarge = "body_too_large"
    /// A request with a `Transfer-Encoding`, or a `CONNECT`: answered `501`.
    case notImplemented = "not_implemented"
    /// A request in an HTTP version other than 1.x: answered `505`.
    case versionNotSupported = "version_not_supported"
    /// A client that did not take a response (or a batch of events) within `writeTimeout`.
    case writeTimeout = "write_timeout"
    /// An event stream whose client let more than its `maxQueuedBytes` pile up.
    case streamQueueFull = "stream_queue_full"

    /// The refusal a parse error stands for.
    init(_ error: HTTPParseError) {
        self = switch error.status {
        case .requestTimeout: .requestTimeout
        case .uriTooLong: .uriTooLong
        case .requestHeaderFieldsTooLarge: .headTooLarge
        case .contentTooLarge: .bodyTooLarge
        case .notImplemented: .notImplemented
        case .httpVersionNotSupported: .versionNotSupported
        default: .badRequest
        }
    }
}
