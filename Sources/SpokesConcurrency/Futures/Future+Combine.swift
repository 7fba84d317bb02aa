import Synchronization

extension Future {
    /// A future of all the values, in the order of `futures`, once every one succeeds;
    /// it fails as soon as any one fails, with that error. An empty list succeeds with [].
    public static func zip(_ futures: [Future]) -> Future<[Value], Failure> {
        guard !futures.isEmpty else { return .preResolved(value: []) }
        let promise = Promise<[Value], Failure>()
        let collected = Mutex<(values: [Value?], remaining: Int)>((Array(repeating: nil, count: futures.count), futures.count))
        for (index, future) in futures.enumerated() {
            future.whenComplete { result in
                switch result {
                case .failure(let error):
                    promise.reject(error)
                case .success(let value):
                    let all: [Value]? = collected.withLock { state in
                        state.values[index] = value
                        state.remaining -= 1
                        return state.remaining == 0 ? state.values.map { $0! } : nil
                    }
                    if let all { promise.resolve(all) }
                }
            }
        }
        return promise.future
    }

    /// A future of whichever of `futures` succeeds first; if all of them fail, it fails
    /// with the error of the last to fail.
    ///
    /// - Precondition: `futures` is not empty (there would be no result and no error).
    public static func firstFinished(from futures: [Future]) -> Future {
        precondition(!futures.isEmpty, "firstFinished(from:) needs at least one future")
        let promise = Promise<Value, Failure>()
        let failuresLeft = Mutex(futures.count)
        for future in futures {
            future.whenComplete { result in
                switch result {
                case .success(let value):
                    promise.resolve(value)
                case .failure(let error):
                    let last = failuresLeft.withLock { left in
                        left -= 1
                        return left == 0
                    }
                    if last { promise.reject(error) }
                }
            }
        }
        return promise.future
    }
}
