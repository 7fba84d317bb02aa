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
        /// Resumed exactly once, by whoever takes the sleeper out of ``State/sleepers``
        /// under the lock (``advance(by:)``, ``bringForward(group:by:)``, the cancellation
        /// handler), or at once by ``sleep(for:group:)`` when it never went in: so unsafe,
        /// not checked (a checked one costs an allocation per sleep, and the simulator
        /// sleeps some fifty thousand times a seed).
        var continuation: UnsafeContinuation<Void, any Error>
    }

    private struct State {
        var nextOrder = 0
        var sleepers: [Int: Sleeper] = [:]
        /// Every sleeper's deadline and order, earliest first (a ``MinHeap``): the
        /// simulator asks for the next deadline and moves to it after every event, and a
        /// scan of every sleeper each time was a thirtieth of its run. An entry whose
        /// sleeper is gone (resumed or cancelled) is skipped when it comes up.
        var queue = MinHeap<SleeperDeadline>()
        /// Sleepers cancelled before they were registered (the handler ran first).
        var cancelledEarly: Set<Int> = []

        /// The first sleeper in deadline order, without stale entries before it.
        mutating func first() -> Sleeper? {
            while let entry = queue.first {
                if let sleeper = sleepers[entry.order] { return sleeper }
                queue.removeFirst()
            }
            return nil
        }

        /// Takes every sleeper due by `now`, earliest first (by order at one deadline).
        /// An entry's deadline is its sleeper's (a move of deadlines rebuilds the queue),
        /// so the queue alone says who is due; each is taken out of ``sleepers`` in one
        /// lookup, and a stale entry (its sleeper gone) is dropped on the way.
        mutating func takeDue(now: Double) -> [Sleeper] {
            var due: [Sleeper] = []
            while let entry = queue.first, entry.deadline <= now {
                queue.removeFirst()
                if let sleeper = sleepers.removeValue(forKey: entry.order) { due.append(sleeper) }
            }
            return due
        }

        /// Makes the queue again from the sleepers (their deadlines moved, or it holds
        /// many more stale entries than sleepers).
        mutating func rebuildQueue() {
            queue = MinHeap(sleepers.values.map { SleeperDeadline(deadline: $0.deadline, order: $0.order) })
        }
    }

    private let state = Mutex(State())
    /// The clock's reading (a `Double`'s bits), read without the lock: every node reads
    /// its clock many times per event, and the lock was most of a reading's cost. Moved
    /// only by ``advance(by:)``, under the lock, so what is computed from it under the
    /// lock (a sleeper's deadline, who is due) is from one reading.
    private let reading: Atomic<UInt64>

    public init(now: Double = 0) {
        reading = Atomic(now.bitPattern)
    }

    public var now: Double { Double(bitPattern: reading.load(ordering: .acquiring)) }

    /// The wall clock of a virtual run: ``unixEpoch`` seconds since 1970 at time 0, then
    /// moving with ``now``, the same every run.
    public var unixNow: Double { Self.unixEpoch + now }

    /// Where a virtual run's wall clock starts: 2027-01-15T08:00:00Z.
    public static let unixEpoch = 1_800_000_000.0

    /// How many tasks are asleep on this clock.
    public var sleepers: Int { state.withLock { $0.sleepers.count } }

    /// The earliest deadline of a sleeper, if any.
    public var nextDeadline: Double? { state.withLock { $0.first()?.deadline } }

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
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
                enum Start { case sleep, now, cancelled }
                let start = state.withLock { state -> Start in
                    if state.cancelledEarly.remove(order) != nil { return .cancelled }
                    if seconds <= 0 { return .now }
                    let deadline = self.now + seconds
                    state.sleepers[order] = Sleeper(deadline: deadline, order: order, group: group, continuation: continuation)
                    if state.queue.count > 2 * state.sleepers.count + 64 { state.rebuildQueue() }
                    state.queue.insert(SleeperDeadline(deadline: deadline, order: order))
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
            let now = self.now
            for (order, sleeper) in state.sleepers where sleeper.group == group {
                state.sleepers[order]?.deadline = sleeper.deadline - max(0, seconds)
            }
            let due = state.sleepers.values.filter { $0.group == group && $0.deadline <= now }.sorted { ($0.deadline, $0.order) < ($1.deadline, $1.order) }
            for sleeper in due { state.sleepers[sleeper.order] = nil }
            state.rebuildQueue()
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
            let now = self.now + max(0, seconds)
            reading.store(now.bitPattern, ordering: .releasing)
            return state.takeDue(now: now)
        }
        for sleeper in due { sleeper.continuation.resume() }
        return due.count
    }
}

/// A sleeper's deadline and order in a ``VirtualClock``'s heap: the earliest first, then
/// the one that went to sleep first.
private struct SleeperDeadline: HeapOrdered {
    var deadline: Double
    var order: Int

    func precedes(_ other: SleeperDeadline) -> Bool {
        deadline < other.deadline || (deadline == other.deadline && order < other.order)
    }
}
