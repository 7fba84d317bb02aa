extension Future {
    /// A future of `transform(result)`, whatever the result.
    public func mapResult<NewValue, NewFailure>(
        _ transform: @escaping @Sendable (Result<Value, Failure>) -> Result<NewValue, NewFailure>
    ) -> Future<NewValue, NewFailure> {
        let promise = Promise<NewValue, NewFailure>()
        whenComplete { promise.complete(with: transform($0)) }
        return promise.future
    }

    /// A future of the value transformed; a failure passes through unchanged.
    public func mapValue<NewValue>(_ transform: @escaping @Sendable (Value) -> NewValue) -> Future<NewValue, Failure> {
        mapResult { $0.map(transform) }
    }

    /// A future of the error transformed; a success passes through unchanged.
    public func mapError<NewFailure>(_ transform: @escaping @Sendable (Failure) -> NewFailure) -> Future<Value, NewFailure> {
        mapResult { $0.mapError(transform) }
    }

    /// A failable mapping: when `transform` returns nil the new future fails with
    /// ``MapError/mappingError(_:)`` carrying the value; a source failure becomes
    /// ``MapError/originalError(_:)``.
    public func flatMap<NewValue>(
        _ transform: @escaping @Sendable (Value) -> NewValue?
    ) -> Future<NewValue, MapError<Value, Failure, NewValue>> {
        mapResult { result in
            switch result {
            case .success(let value):
                transform(value).map { .success($0) } ?? .failure(.mappingError(value))
            case .failure(let error):
                .failure(.originalError(error))
            }
        }
    }

    /// Chains asynchronous work: when this future succeeds, starts `next` with its value
    /// and completes with `next`'s future. A failure skips `next`.
    public func then<NewValue>(
        _ next: @escaping @Sendable (Value) -> Future<NewValue, Failure>
    ) -> Future<NewValue, Failure> {
        let promise = Promise<NewValue, Failure>()
        whenComplete { result in
            switch result {
            case .success(let value): next(value).whenComplete { promise.complete(with: $0) }
            case .failure(let error): promise.reject(error)
            }
        }
        return promise.future
    }
}
