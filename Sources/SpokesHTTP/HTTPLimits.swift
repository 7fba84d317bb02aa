/// Every bound an ``HTTPServer`` keeps, in one place. The defaults suit a dashboard
/// served to a few browsers; tests shrink the timeouts to keep themselves fast.
///
/// Times are in seconds, measured on the monotonic clock.
public struct HTTPLimits: Sendable, Hashable {
    /// Longest request line (method, target and version), without its line ending; a
    /// longer one is answered `414 URI Too Long`.
    public var maxRequestLineBytes = 8192
    /// Largest request head: from the first byte of the request line to the end of the
    /// empty line after the headers. A larger one is answered `431`.
    public var maxHeaderBytes = 16384
    /// Most header field lines in one request; more is answered `431`.
    public var maxHeaderCount = 100
    /// Largest request body (by `Content-Length`); a larger one is answered `413`
    /// before any of it is read.
    public var maxBodyBytes = 65536
    /// The whole request, head and body, must arrive within this many seconds of its
    /// first byte (of the connection opening, for a connection's first request). A client
    /// that is too slow is answered `408 Request Timeout` and the connection closes.
    public var headerTimeout: Double = 5
    /// How long a keep-alive connection may wait, silent, for its next request before
    /// the server closes it (without a response: nothing was asked).
    public var idleTimeout: Double = 15
    /// How long one response (or one batch of events) may take to be accepted by the
    /// client's socket. A client that does not read is dropped after this.
    public var writeTimeout: Double = 10
    /// The kernel's send buffer per connection (`SO_SNDBUF`; 0 leaves the kernel's
    /// auto-tuning, which lets it grow to megabytes). With the stream queue, this bounds
    /// the memory a client that does not read can hold, and lets `writeTimeout` notice it
    /// soon. 256 KiB is more than a LAN needs to run at full speed.
    public var sendBufferBytes = 256 * 1024
    /// Most connections with a request in progress at once (from its last byte until
    /// its response is written, or its event stream ends); a request beyond is answered
    /// `503` and its connection closed.
    public var maxConnections = 64
    /// Most connections with a request in progress at once from one IP address; a
    /// request beyond is answered `503`.
    public var maxConnectionsPerAddress = 16
    /// Most connections with no request in progress (just opened, still sending a
    /// request, or idle between keep-alive requests). They have this budget of their
    /// own, apart from the caps above: when one more connection arrives, the one that has
    /// been without a request longest is closed to make room. So half-open connections
    /// from anywhere (even 127.0.0.1, where every browser is) churn through this budget
    /// and never keep a request from being answered.
    public var maxIdleConnections = 32
    /// Most event streams open at once; one more is answered `503`.
    public var maxStreams = 16
    /// An event stream that has sent nothing for this many seconds sends a comment line,
    /// so proxies keep it open and a client that went away is noticed.
    public var streamKeepAlive: Double = 15

    public init() {}
}
