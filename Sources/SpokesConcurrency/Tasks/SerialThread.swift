import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// A thread of its own that runs the blocks given to it one at a time, in order: a serial
/// queue that nothing else can starve. On Linux, Swift's cooperative pool and Dispatch's
/// global queues share threads, so a serial `DispatchQueue` waits whenever every task of
/// the pool computes; a connection's writes (its heartbeats and replies among them) must
/// not. The thread holds the object until ``finish()``, and ends once the blocks given
/// before it have run: whoever makes one finishes it.
public final class SerialThread: Sendable {
    private struct Pending {
        var blocks: [@Sendable () -> Void] = []
        var finishing = false
    }

    private let pending = Mutex(Pending())
    /// Signalled once per block given (and once by `finish`): the thread sleeps on it.
    private let wake = DispatchSemaphore(value: 0)

    /// Starts the thread, named `name`.
    public init(name: String) {
        PlainThread.start(name: name) { [self] in
            while true {
                wake.wait()
                let (blocks, finishing) = pending.withLock { state in
                    defer { state.blocks.removeAll() }
                    return (state.blocks, state.finishing)
                }
                for block in blocks { block() }
                if finishing, pending.withLock({ $0.blocks.isEmpty }) { return }
            }
        }
    }

    /// Runs `block` on the thread after every block given before it; nothing once
    /// ``finish()`` was called.
    public func async(_ block: @escaping @Sendable () -> Void) {
        let accepted = pending.withLock { state in
            guard !state.finishing else { return false }
            state.blocks.append(block)
            return true
        }
        if accepted { wake.signal() }
    }

    /// Blocks the caller until every block given so far has run (at once after
    /// ``finish()``). Never call it from the thread itself, nor from the cooperative pool.
    public func sync() {
        let done = DispatchSemaphore(value: 0)
        let accepted = pending.withLock { state in
            guard !state.finishing else { return false }
            state.blocks.append { done.signal() }
            return true
        }
        guard accepted else { return }
        wake.signal()
        done.wait()
    }

    /// Lets the thread end once the blocks given so far have run.
    public func finish() {
        pending.withLock { $0.finishing = true }
        wake.signal()
    }
}
