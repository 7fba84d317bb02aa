import Synchronization

/// Runs an async operation under a deadline.
///
/// `value` returns the operation's value, rethrows its error, or throws ``TimeoutError``
/// once `seconds` pass, whichever comes first. The deadline holds even when the
/// operation ignores cancellation: the operation is cancelled, but nobody waits for it.
/// `cancel()` (or cancelling a task that awaits `value`) ends it with `CancellationError`.
///
/// ```swift
/// let reply = try await TimeoutTask(seconds: 5) { try await peer.scan(sector) }.value
/// ```
///
/// `seconds` may be any number: it goes through ``Duration/clamped(seconds:)``, so NaN
/// and negative deadlines pass at once and huge ones (even infinity) wait at most about
/// 31.7 years; nothing traps.
///
/// The operation starts when the task is made. Every awaiter of `value` gets the same
/// outcome. Unlike the book's version, the outcome is settled once under a lock, and
/// each waiting continuation is taken out of the state in the same step that settles
/// it, so no continuation can be resumed twice or left hanging.
public final class TimeoutTask<Success: Sendable>: Sendable {
    public let seconds: Double
    private let outcome: TimeoutOutcome
    private let operationTask: Task<Void, Never>
    /// The deadline, on `clock` (``RuntimeClock/startTimer(after:_:)``: one thread keeps
    /// every deadline of the machine's clock, so a deadline costs no task of its own).
    private let timer: ClockTimer

    /// Runs `operation`, giving it `seconds` on `clock` (the machine's by default; a
    /// node's runtime clock where a shell calls), in a task that prefers `executor` when
    /// one is given (a ``ProtocolExecutor``: the operation's wake-ups then need no pool
    /// thread).
    public init(
        seconds: Double, clock: any RuntimeClock = RealClock(), executor: (any TaskExecutor)? = nil,
        operation: @escaping @Sendable () async throws -> Success
    ) {
        self.seconds = seconds
        let outcome = TimeoutOutcome()
        self.outcome = outcome
        operationTask = Task.preferring(executor) {
            do {
                outcome.settle(.success(try await operation()))
            } catch {
                outcome.settle(.failure(error))
            }
        }
        timer = clock.startTimer(after: seconds) {
            outcome.settle(.failure(TimeoutError(seconds: seconds)))
        }
        outcome.stopOnSettle(operationTask, timer)
    }

    /// The operation's value; or its error, ``TimeoutError``, or `CancellationError`.
    public var value: Success {
        get async throws {
            let value = try await withTaskCancellationHandler {
                try await withUnsafeThrowingContinuation { continuation in
                    outcome.wait(continuation)
                }
            } onCancel: {
                self.cancel()
            }
            // The one success ever settled is the operation's, a `Success`.
            return value as! Success
        }
    }

    /// Ends the task with `CancellationError` (unless it has already ended) and cancels
    /// the operation.
    public func cancel() {
        outcome.settle(.failure(CancellationError()))
    }
}

/// A ``TimeoutTask``'s single outcome, the continuations waiting for it, and what to stop
/// once it is settled. Not generic: the value is held as `any Sendable` and the task casts
/// it back. A generic one, not specialised across modules, looked up the metadata of its
/// state, lock, result and continuation at run time on every use: about 9,000
/// instructions of each task a coordinator ran on its own worker (callgrind, no-op tasks).
/// A task on a busy coordinator's every attempt, so it allocates little: its first waiter
/// (nearly always the only one) and what it stops are fields, not lists. Every
/// continuation is taken out of the state in the same step that settles it, or resumed at
/// once when it comes after: each is resumed exactly once (which is why an unchecked
/// continuation is safe here).
private final class TimeoutOutcome: Sendable {
    private struct State {
        var result: Result<any Sendable, any Error>?
        var waiter: UnsafeContinuation<any Sendable, any Error>?
        var moreWaiters: [UnsafeContinuation<any Sendable, any Error>] = []
        var operation: Task<Void, Never>?
        var timer: ClockTimer?
    }

    private let state = Mutex(State())

    /// Settles the outcome if nobody has; resumes every waiter exactly once, then
    /// cancels the operation and the deadline.
    func settle(_ result: Result<any Sendable, any Error>) {
        let taken: State? = state.withLock { state in
            guard state.result == nil else { return nil }
            let taken = state
            state = State(result: result)
            return taken
        }
        guard let taken else { return }
        taken.waiter?.resume(with: result)
        for waiter in taken.moreWaiters { waiter.resume(with: result) }
        taken.operation?.cancel()
        taken.timer?.cancel()
    }

    func wait(_ continuation: UnsafeContinuation<any Sendable, any Error>) {
        let settled: Result<any Sendable, any Error>? = state.withLock { state in
            if let result = state.result { return result }
            if state.waiter == nil { state.waiter = continuation } else { state.moreWaiters.append(continuation) }
            return nil
        }
        if let settled { continuation.resume(with: settled) }
    }

    /// Keeps the operation and its deadline to stop once the outcome is settled; stops
    /// them at once when it already is.
    func stopOnSettle(_ operation: Task<Void, Never>, _ timer: ClockTimer) {
        let settled: Bool = state.withLock { state in
            guard state.result == nil else { return true }
            state.operation = operation
            state.timer = timer
            return false
        }
        if settled {
            operation.cancel()
            timer.cancel()
        }
    }
}

/// Runs `operation` under a deadline of `seconds`; see ``TimeoutTask``.
public func withTimeout<T: Sendable>(
    seconds: Double, clock: any RuntimeClock = RealClock(), operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await TimeoutTask(seconds: seconds, clock: clock, operation: operation).value
}
