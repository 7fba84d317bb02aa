/// A condition a test awaited that did not come true (or did not stay true) in time.
public struct EventuallyTimeout: Error, CustomStringConvertible {
    public var what: String
    public var seconds: Double
    /// True when the condition was true and stopped holding (``holds(_:for:every:_:)``).
    public var broke = false

    public init(what: String, seconds: Double, broke: Bool = false) {
        self.what = what
        self.seconds = seconds
        self.broke = broke
    }

    public var description: String {
        broke ? "stopped holding within \(seconds) s: \(what)" : "not within \(seconds) s: \(what)"
    }
}

/// Waits until `condition` is true, checking it every `every`, at most `seconds`; throws
/// ``EventuallyTimeout`` naming `what` otherwise. The one wait every test uses instead of
/// sleeping: a condition is awaited, never assumed after a fixed time.
public func eventually(
    _ what: @autoclosure () -> String, within seconds: Double = 10, every: Duration = .milliseconds(5),
    _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw EventuallyTimeout(what: what(), seconds: seconds) }
        try await Task.sleep(for: every)
    }
}

/// Checks that `condition` stays true for `seconds`, every `every`; throws
/// ``EventuallyTimeout`` (with `broke`) at the first check where it is false. For what
/// must not happen: a frozen node must not come back alive, a full worker must take
/// no more.
public func holds(
    _ what: @autoclosure () -> String, for seconds: Double, every: Duration = .milliseconds(5), _ condition: () async throws -> Bool
) async throws {
    let end = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
    repeat {
        guard try await condition() else { throw EventuallyTimeout(what: what(), seconds: seconds, broke: true) }
        try await Task.sleep(for: every)
    } while ContinuousClock.now < end
}
