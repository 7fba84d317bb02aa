extension Result {
    /// Runs `body` with the value when this is a success; returns self for chaining.
    @discardableResult
    public func onSuccess(_ body: (Success) throws -> Void) rethrows -> Result {
        if case .success(let value) = self { try body(value) }
        return self
    }

    /// Runs `body` with the error when this is a failure; returns self for chaining.
    @discardableResult
    public func onFailure(_ body: (Failure) throws -> Void) rethrows -> Result {
        if case .failure(let error) = self { try body(error) }
        return self
    }
}
