import FoundationEssentials

/// Runs blocking work (a socket connect, a pipe read, a wait on a queue) on a thread of
/// its own, and awaits its result without blocking the caller's thread.
///
/// Why not `DispatchQueue.global().async`: on Linux, Swift's cooperative pool runs on
/// Dispatch's global concurrent queue, which keeps about one thread per core busy. A
/// blocked item there stalls every task of the process: measured on 2 cores, a 0.1 s
/// `Task.sleep` took 2.1 s while four global items slept for 2 s. A thread per call costs
/// tens of microseconds, so this is for calls that may block, not for hot paths.
///
/// In a task of a simulation's one thread (``SimulationExecutor/isCurrent``) the work runs
/// inline: there it is a simulated node's, on its in-memory disk, and must not run beside
/// the queue; what a slow disk would have waited is then slept out on the virtual clock
/// afterwards (``SimulationExecutor/charge(_:on:)``). Another test's task whose job that
/// thread runs meanwhile gets a thread of its own, as anywhere.
public func runBlocking<T: Sendable>(_ name: String, _ body: @escaping @Sendable () throws -> T) async throws -> T {
    if SimulationExecutor.isCurrent { return try await SimulationExecutor.runInline(body) }
    return try await withCheckedThrowingContinuation { continuation in
        PlainThread.start(name: name) { continuation.resume(with: Result { try body() }) }
    }
}

/// ``runBlocking(_:_:)`` for work that cannot fail.
public func runBlocking<T: Sendable>(_ name: String, _ body: @escaping @Sendable () -> T) async -> T {
    if SimulationExecutor.isCurrent { return await SimulationExecutor.runInline(body) }
    return await withCheckedContinuation { continuation in
        PlainThread.start(name: name) { continuation.resume(returning: body()) }
    }
}

/// Starts blocking work on a thread of its own and returns at once; for work whose end
/// the caller awaits with a deadline of its own (through a ``Promise``, say).
/// In a task of a simulation's one thread it runs inline, before this returns.
public func startBlocking(_ name: String, _ body: @escaping @Sendable () -> Void) {
    if SimulationExecutor.isCurrent { return SimulationExecutor.runInlineUnawaited(body) }
    PlainThread.start(name: name, body)
}
