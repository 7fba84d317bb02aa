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
    private let outcome: Outcome
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
        let outcome = Outcome()
        self.outcome = outcome
        operationTask = Task(executorPreference: executor) {
            do {
                outcome.settle(.success(try await operation()))
            } catch {
                outcome.settle(.failure(error))
            }
        }
        timer = clock.startTimer(after: seconds) {
            outcome.settle(.failure(TimeoutError(seconds: seconds)))
        }
        outcome.onSettle { [operationTask, timer] in
            operationTask.cancel()
            timer.cancel()
        }
    }

    /// The operation's value; or its error, ``TimeoutError``, or `CancellationError`.
    public var value: Success {
        get async throws {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    outcome.wait(continuation)
                }
            } onCancel: {
                self.cancel()
            }
        }
    }

    /// Ends the task with `CancellationError` (unless it has already ended) and cancels
    /// the operation.
    public func cancel() {
        outcome.settle(.failure(CancellationError()))
    }

    /// The single outcome and the continuations waiting for it.
    private final class Outcome: Sendable {
        private enum State {
            case pending(waiters: [CheckedContinuation<Success, any Error>], onSettle: [@Sendable () -> Void])
            case settled(Result<Success, any Error>)
        }

        private let state = Mutex(State.pending(waiters: [], onSettle: []))

        /// Settles the outcome if nobody has; resumes every waiter exactly once.
        func settle(_ result: Result<Success, any Error>) {
            let taken: ([CheckedContinuation<Success, any Error>], [@Sendable () -> Void])? = state.withLock { state in
                guard case .pending(let waiters, let onSettle) = state else { return nil }
                state = .settled(result)
                return (waiters, onSettle)
            }
            guard let (waiters, onSettle) = taken else { return }
            for waiter in waiters { waiter.resume(with: result) }
            for action in onSettle { action() }
        }

        func wait(_ continuation: CheckedContinuation<Success, any Error>) {
            let settled: Result<Success, any Error>? = state.withLock { state in
                switch state {
                case .pending(var waiters, let onSettle):
                    waiters.append(continuation)
                    state = .pending(waiters: waiters, onSettle: onSettle)
                    return nil
                case .settled(let result):
                    return result
                }
            }
            if let settled { continuation.resume(with: settled) }
        }

        func onSettle(_ action: @escaping @Sendable () -> Void) {
            let settled: Bool = state.withLock { state in
                guard case .pending(let waiters, var actions) = state else { return true }
                actions.append(action)
                state = .pending(waiters: waiters, onSettle: actions)
                return false
            }
            if settled { action() }
        }
    }
}

/// Runs `operation` under a deadline of `seconds`; see ``TimeoutTask``.
public func withTimeout<T: Sendable>(
    seconds: Double, clock: any RuntimeClock = RealClock(), operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await TimeoutTask(seconds: seconds, clock: clock, operation: operation).value
}
