/// The write side of a ``Future``: whoever does the work holds the promise and
/// resolves or rejects it once; everyone else holds its `future`.
///
/// ```swift
/// func fetchNumber() -> Future<Int, FetchError> {
///     let promise = Promise<Int, FetchError>()
///     legacyFetch { number, error in
///         if let number { promise.resolve(number) } else { promise.reject(error ?? .noData) }
///     }
///     return promise.future
/// }
/// ```
///
/// Only the first of `resolve`, `reject` and `complete(with:)` takes effect; later calls
/// return false and change nothing. Safe to call from any thread.
public struct Promise<Value: Sendable, Failure: Error>: Sendable {
    public let future: Future<Value, Failure>

    public init() {
        future = Future()
    }

    /// Succeeds the future with `value`, unless it is already complete.
    @discardableResult
    public func resolve(_ value: Value) -> Bool {
        future.complete(with: .success(value))
    }

    /// Fails the future with `error`, unless it is already complete.
    @discardableResult
    public func reject(_ error: Failure) -> Bool {
        future.complete(with: .failure(error))
    }

    /// Completes the future with `result`, unless it is already complete.
    @discardableResult
    public func complete(with result: Result<Value, Failure>) -> Bool {
        future.complete(with: result)
    }
}
