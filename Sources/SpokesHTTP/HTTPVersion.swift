/// The HTTP versions the server speaks. Any other `HTTP/x.y` is answered `505`.
public enum HTTPVersion: String, Sendable, Hashable, CustomStringConvertible {
    case http1_0 = "HTTP/1.0"
    case http1_1 = "HTTP/1.1"

    public var description: String { rawValue }
}
