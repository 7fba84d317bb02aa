import Synchronization

/// A stand-in for a result that arrives later: the read side of a ``Promise``.
///
/// Callbacks (`onSuccess`, `onFailure`, `finally`) can be added any number of times, from
/// any thread, before or after completion; each runs exactly once, in the order added.
/// Callbacks added before completion run on the thread that completes the promise;
/// those added after run at once, on the thread adding them. They run outside the
/// future's lock, so a callback may add callbacks or complete other promises.
///
/// Invariant: a future completes at most once; the first resolution wins.
public final class Future<Value: Sendable, Failure: Error>: Sendable {
    public typealias Callback = @Sendable (Result<Value, Failure>) -> Void

    private enum State {
        case pending([Callback])
        case completed(Result<Value, Failure>)
    }

    private let state: Mutex<State>

    init() {
        state = Mutex(.pending([]))
    }

    init(result: Result<Value, Failure>) {
        state = Mutex(.completed(result))
    }

    /// A future that has already succeeded with `value`.
    public static func preResolved(value: Value) -> Future {
        Future(result: .success(value))
    }

    /// A future that has already failed with `error`.
    public static func preRejected(error: Failure) -> Future {
        Future(result: .failure(error))
    }

    /// The result if the future has completed, without waiting.
    public var currentResult: Result<Value, Failure>? {
        state.withLock { state in
            if case .completed(let result) = state { return result }
            return nil
        }
    }

    public var isComplete: Bool { currentResult != nil }

    /// Completes the future unless it already is; returns whether this call completed it.
    @discardableResult
    func complete(with result: Result<Value, Failure>) -> Bool {
        let callbacks: [Callback]? = state.withLock { state in
            guard case .pending(let callbacks) = state else { return nil }
            state = .completed(result)
            return callbacks
        }
        guard let callbacks else { return false }
        for callback in callbacks { callback(result) }
        return true
    }

    /// Runs `callback` with the result: now if complete, else on completion.
    public func whenComplete(_ callback: @escaping Callback) {
        let completed: Result<Value, Failure>? = state.withLock { state in
            switch state {
            case .pending(var callbacks):
                callbacks.append(callback)
                state = .pending(callbacks)
                return nil
            case .completed(let result):
                return result
            }
        }
        if let completed { callback(completed) }
    }

    /// Runs `body` with the value if the future succeeds.
    @discardableResult
    public func onSuccess(_ body: @escaping @Sendable (Value) -> Void) -> Future {
        whenComplete { if case .success(let value) = $0 { body(value) } }
        return self
    }

    /// Runs `body` with the error if the future fails.
    @discardableResult
    public func onFailure(_ body: @escaping @Sendable (Failure) -> Void) -> Future {
        whenComplete { if case .failure(let error) = $0 { body(error) } }
        return self
    }

    /// The original library's name for ``onFailure(_:)``.
    @discardableResult
    public func onError(_ body: @escaping @Sendable (Failure) -> Void) -> Future {
        onFailure(body)
    }

    /// Runs `body` with the result, success or failure, after the callbacks added before it.
    @discardableResult
    public func finally(_ body: @escaping Callback) -> Future {
        whenComplete(body)
        return self
    }
}
