import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// A thread of its own that runs the blocks given to it one at a time, in order: a serial
/// queue that nothing else can starve. On Linux, Swift's cooperative pool and Dispatch's
/// global queues share threads, so a serial `DispatchQueue` waits whenever every task of
/// the pool computes; a connection's writes (its heartbeats and replies among them) must
/// not. The thread starts with the first block given, so one that is never given a block
/// costs no thread (an idle connection's writes all run in place); it holds the object
/// until ``finish()``, and ends once the blocks given before it have run: whoever makes
/// one finishes it.
public final class SerialThread: Sendable {
    private struct Pending {
        var blocks: [@Sendable () -> Void] = []
        var finishing = false
        var started = false
    }

    private let name: String
    private let pending = Mutex(Pending())
    /// Signalled once per block given (and once by `finish`): the thread sleeps on it.
    private let wake = DispatchSemaphore(value: 0)

    /// A thread named `name`, started with the first block.
    public init(name: String) {
        self.name = name
    }

    /// Whether a block was ever given, so the thread started.
    public var isStarted: Bool { pending.withLock { $0.started } }

    private func run() {
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

    /// Queues `block` unless finishing; starts the thread with the first.
    private func give(_ block: @escaping @Sendable () -> Void) -> Bool {
        let (accepted, starts) = pending.withLock { state -> (Bool, Bool) in
            guard !state.finishing else { return (false, false) }
            state.blocks.append(block)
            defer { state.started = true }
            return (true, !state.started)
        }
        if starts { PlainThread.start(name: name) { [self] in run() } }
        if accepted { wake.signal() }
        return accepted
    }

    /// Runs `block` on the thread after every block given before it; nothing once
    /// ``finish()`` was called.
    public func async(_ block: @escaping @Sendable () -> Void) {
        _ = give(block)
    }

    /// Blocks the caller until every block given so far has run (at once after
    /// ``finish()``). Never call it from the thread itself, nor from the cooperative pool.
    public func sync() {
        let done = DispatchSemaphore(value: 0)
        guard give({ done.signal() }) else { return }
        done.wait()
    }

    /// Lets the thread end once the blocks given so far have run (a thread never started
    /// never starts).
    public func finish() {
        let started = pending.withLock { state in
            state.finishing = true
            return state.started
        }
        if started { wake.signal() }
    }
}
