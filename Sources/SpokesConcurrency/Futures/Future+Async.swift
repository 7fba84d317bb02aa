extension Future {
    /// Waits for the future without blocking a thread, and returns its value or throws
    /// its error.
    ///
    /// A future cannot be cancelled, so cancelling the waiting task does not end the wait;
    /// bound it with ``TimeoutTask`` or ``withTimeout(seconds:operation:)`` where needed.
    public var value: Value {
        get async throws(Failure) {
            try await result.get()
        }
    }

    /// Waits for the future without blocking a thread and returns its result.
    public var result: Result<Value, Failure> {
        get async {
            if let result = currentResult { return result }
            return await withCheckedContinuation { continuation in
                whenComplete { continuation.resume(returning: $0) }
            }
        }
    }

    /// A future completed by an async operation that reports its own typed result.
    public convenience init(
        priority: TaskPriority? = nil, operation: @escaping @Sendable () async -> Result<Value, Failure>
    ) {
        self.init()
        Task(priority: priority) { self.complete(with: await operation()) }
    }
}

extension Future where Failure == any Error {
    /// A future completed by an async throwing operation, run in a new task.
    public convenience init(priority: TaskPriority? = nil, operation: @escaping @Sendable () async throws -> Value) {
        self.init()
        Task(priority: priority) {
            do {
                self.complete(with: .success(try await operation()))
            } catch {
                self.complete(with: .failure(error))
            }
        }
    }
}

extension Future where Failure == Never {
    /// Waits for a future that cannot fail and returns its value.
    ///
    /// Also works around a Swift 6.3 compiler crash (signal 11 in SILGen) when the
    /// generic `throws(Failure)` getter is used with `Failure == Never`.
    public var value: Value {
        get async {
            switch await result {
            case .success(let value): value
            }
        }
    }
}
