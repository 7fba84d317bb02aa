import Synchronization

/// A clock that moves only when told (``advance(by:)``): the runtime's clock for tests
/// and the simulator, as swift-nio's `EmbeddedEventLoop.advanceTime` is for channel
/// handlers. A sleeper resumes once the clock reaches its deadline; sleepers due at the
/// same time resume in the order they went to sleep. Nothing here waits for real time.
public final class VirtualClock: RuntimeClock {
    private struct Sleeper {
        var deadline: Double
        var order: Int
        /// Whose sleeper this is (``sleep(for:group:)``), for ``bringForward(group:by:)``.
        var group: Int?
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Double
        var nextOrder = 0
        var sleepers: [Int: Sleeper] = [:]
        /// Sleepers cancelled before they were registered (the handler ran first).
        var cancelledEarly: Set<Int> = []
    }

    private let state: Mutex<State>

    public init(now: Double = 0) {
        state = Mutex(State(now: now))
    }

    public var now: Double { state.withLock { $0.now } }

    /// The wall clock of a virtual run: ``unixEpoch`` seconds since 1970 at time 0, then
    /// moving with ``now``, the same every run.
    public var unixNow: Double { Self.unixEpoch + now }

    /// Where a virtual run's wall clock starts: 2027-01-15T08:00:00Z.
    public static let unixEpoch = 1_800_000_000.0

    /// How many tasks are asleep on this clock.
    public var sleepers: Int { state.withLock { $0.sleepers.count } }

    /// The earliest deadline of a sleeper, if any.
    public var nextDeadline: Double? { state.withLock { $0.sleepers.values.map(\.deadline).min() } }

    public func sleep(for seconds: Double) async throws {
        try await sleep(for: seconds, group: nil)
    }

    /// ``sleep(for:)`` as one of `group`'s sleepers: ``bringForward(group:by:)`` may wake
    /// it early (a node whose own clock jumped, ``PausableClock`` in the simulator).
    public func sleep(for seconds: Double, group: Int?) async throws {
        try Task.checkCancellation()
        let order = state.withLock { state in
            defer { state.nextOrder += 1 }
            return state.nextOrder
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Start { case sleep, now, cancelled }
                let start = state.withLock { state -> Start in
                    if state.cancelledEarly.remove(order) != nil { return .cancelled }
                    if seconds <= 0 { return .now }
                    state.sleepers[order] = Sleeper(deadline: state.now + seconds, order: order, group: group, continuation: continuation)
                    return .sleep
                }
                switch start {
                case .sleep: break
                case .now: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let sleeper = state.sleepers.removeValue(forKey: order) else {
                    state.cancelledEarly.insert(order)
                    return nil
                }
                return sleeper
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Brings the deadlines of `group`'s sleepers `seconds` closer, resuming those due
    /// now, earliest first, while the clock and every other sleeper stay where they are:
    /// one node's clock jumping forward. Returns how many were resumed.
    @discardableResult
    public func bringForward(group: Int, by seconds: Double) -> Int {
        let due = state.withLock { state -> [Sleeper] in
            let now = state.now
            for (order, sleeper) in state.sleepers where sleeper.group == group {
                state.sleepers[order]?.deadline = sleeper.deadline - max(0, seconds)
            }
            let due = state.sleepers.values.filter { $0.group == group && $0.deadline <= now }.sorted { ($0.deadline, $0.order) < ($1.deadline, $1.order) }
            for sleeper in due { state.sleepers[sleeper.order] = nil }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
        return due.count
    }

    /// Moves the clock `seconds` forward, resuming every sleeper due by then, earliest
    /// first. Returns how many were resumed. (They run when the executor next runs them:
    /// a test awaits what it expects of them, as it would of any task.)
    @discardableResult
    public func advance(by seconds: Double) -> Int {
        let due = state.withLock { state -> [Sleeper] in
            state.now += max(0, seconds)
            let now = state.now
            let due = state.sleepers.values.filter { $0.deadline <= now }.sorted { ($0.deadline, $0.order) < ($1.deadline, $1.order) }
            for sleeper in due { state.sleepers[sleeper.order] = nil }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
        return due.count
    }
}
