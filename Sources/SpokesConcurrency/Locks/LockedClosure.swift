/// A closure to keep behind a lock: `Mutex<LockedClosure<F>?>`, never `Mutex<F?>`.
///
/// Why: a closure stored directly as a `Mutex`'s value and read with `withLock { $0 }`
/// comes back wrapped in one more reabstraction thunk at every read, and the chain grows
/// with the reads. Measured (`swiftc -O`, Swift 6.3.1, an async closure read and called
/// 2,000 times a round): 74, 206, 343, 454, 613 us a read in rounds 1 to 5, against a
/// steady 7 us through this box. A node asked for its replica groups at every dashboard
/// refresh and metrics scrape would slow down for as long as it ran, then overflow its
/// stack. Boxed, the closure is a `let` of a class: read as often as one likes, it is the
/// same closure.
public final class LockedClosure<Closure: Sendable>: Sendable {
    public let closure: Closure

    public init(_ closure: Closure) {
        self.closure = closure
    }
}
