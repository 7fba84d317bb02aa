/// What went wrong below the actor system: addresses, sockets, connections.
public enum TransportError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidAddress(String, reason: String)
    case socketFailed(operation: String, address: String, errno: Int32)
    case connectTimedOut(address: String)

    public var description: String {
        switch self {
        case .invalidAddress(let text, let reason):
            "invalid address '\(text)': \(reason)"
        case .socketFailed(let operation, let address, let code):
            "\(operation) \(address) failed: \(String(cString: strerror(code)))"
        case .connectTimedOut(let address):
            "connecting to \(address) timed out"
        }
    }
}

import Glibc
