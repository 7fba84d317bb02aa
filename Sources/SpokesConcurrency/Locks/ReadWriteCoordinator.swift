import Dispatch

/// Coordinates access to a resource shared across threads: any number of reads at once,
/// writes one at a time and alone.
///
/// - `read` runs synchronously and returns the closure's value; reads run concurrently.
/// - `enqueueWrite` returns at once; the write runs later as a barrier: after every
///   read and write submitted before it, before any submitted after it. So a read
///   always sees every write enqueued before it.
///
/// Built on a concurrent dispatch queue with barrier blocks. Do not call `read` from
/// inside a write or a read (it would wait for itself).
public final class ReadWriteCoordinator: Sendable {
    private let queue: DispatchQueue

    public init(label: String = "spokes.read-write-coordinator") {
        queue = DispatchQueue(label: label, attributes: .concurrent)
    }

    /// Runs `body` as a read and returns its value.
    public func read<T>(_ body: () throws -> T) rethrows -> T {
        try queue.sync(execute: body)
    }

    /// Queues `body` as a write and returns at once.
    public func enqueueWrite(_ body: @escaping @Sendable () -> Void) {
        queue.async(flags: .barrier, execute: body)
    }
}
