import Synchronization

/// How many times a node turned away each kind of input (see ``Rejection``). Shared by
/// the node's transport, discovery and services; safe from any thread.
public final class RejectionCounters: Sendable {
    private let counts = Mutex<[Rejection: Int]>([:])

    public init() {}

    public func count(_ rejection: Rejection) {
        counts.withLock { $0[rejection, default: 0] += 1 }
    }

    public subscript(_ rejection: Rejection) -> Int {
        counts.withLock { $0[rejection] ?? 0 }
    }

    /// Every counter, zeros included, by ``Rejection`` raw value.
    public var snapshot: [String: Int] {
        let counts = counts.withLock { $0 }
        return Dictionary(uniqueKeysWithValues: Rejection.allCases.map { ($0.rawValue, counts[$0] ?? 0) })
    }

    /// All rejections so far.
    public var total: Int { counts.withLock { $0.values.reduce(0, +) } }
}
