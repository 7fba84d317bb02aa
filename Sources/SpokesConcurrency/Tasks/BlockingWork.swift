import Foundation

/// Runs blocking work (a socket connect, a pipe read, a wait on a queue) on a thread of
/// its own, and awaits its result without blocking the caller's thread.
///
/// Why not `DispatchQueue.global().async`: on Linux, Swift's cooperative pool runs on
/// Dispatch's global concurrent queue, which keeps about one thread per core busy. A
/// blocked item there stalls every task of the process: measured on 2 cores, a 0.1 s
/// `Task.sleep` took 2.1 s while four global items slept for 2 s. A thread per call costs
/// tens of microseconds, so this is for calls that may block, not for hot paths.
public func runBlocking<T: Sendable>(_ name: String, _ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.name = name
        thread.start()
    }
}

/// ``runBlocking(_:_:)`` for work that cannot fail.
public func runBlocking<T: Sendable>(_ name: String, _ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: body()) }
        thread.name = name
        thread.start()
    }
}

/// Starts blocking work on a thread of its own and returns at once; for work whose end
/// the caller awaits with a deadline of its own (through a ``Promise``, say).
public func startBlocking(_ name: String, _ body: @escaping @Sendable () -> Void) {
    let thread = Thread(block: body)
    thread.name = name
    thread.start()
}
