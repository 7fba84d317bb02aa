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
        var wake: Wake
    }

    /// What a sleeper does when it comes due.
    private enum Wake {
        /// A task asleep in ``sleep(for:group:)``. Resumed exactly once, by whoever takes
        /// the sleeper out of ``State/sleepers`` under the lock (``advance(by:)``,
        /// ``bringForward(group:by:)``, the cancellation handler), or at once by
        /// ``sleep(for:group:)`` when it never went in: so unsafe, not checked (a checked
        /// one costs an allocation per sleep, and the simulator sleeps some fifty thousand
        /// times a seed).
        case task(UnsafeContinuation<Void, any Error>)
        /// A deadline's action (``schedule(after:group:_:)``): run where the clock moves,
        /// with no task of its own.
        case action(@Sendable () -> Void)

        /// Resumes the task or runs the action.
        func fire() {
            switch self {
            case .task(let continuation): continuation.resume()
            case .action(let action): action()
            }
        }
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

        /// Adds `sleeper` to ``sleepers`` and its deadline to the queue (made again first
        /// when it holds many more stale entries than sleepers).
        mutating func add(_ sleeper: Sleeper) {
            sleepers[sleeper.order] = sleeper
            if queue.count > 2 * sleepers.count + 64 { rebuildQueue() }
            queue.insert(SleeperDeadline(deadline: sleeper.deadline, order: sleeper.order))
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

    /// How many tasks are asleep on this clock, and deadlines wait on it
    /// (``schedule(after:group:_:)``).
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
                    state.add(Sleeper(deadline: deadline, order: order, group: group, wake: .task(continuation)))
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
            // Only a task's sleeper has this order (an action's never shares it).
            if case .task(let continuation)? = sleeper?.wake { continuation.resume(throwing: CancellationError()) }
        }
    }

    /// Runs `action` once `seconds` have passed on this clock (at once when the clock next
    /// moves, for `seconds` of zero or less), unless ``cancelScheduled(_:)`` takes it back
    /// first (with the number returned here). One of `group`'s sleepers, as
    /// ``sleep(for:group:)``'s are.
    ///
    /// No task waits for it: `action` runs where the clock is moved (``advance(by:)``,
    /// ``bringForward(group:by:)``), in deadline order with the tasks it resumes, so it
    /// must be short and must not block. A deadline that was a task asleep here cost a
    /// task, three jobs and a cancellation handler (a pending call's, a delayed datagram's
    /// or stream chunk's): about a third of a simulated cluster's jobs.
    @discardableResult
    public func schedule(after seconds: Double, group: Int? = nil, _ action: @escaping @Sendable () -> Void) -> Int {
        // NaN and negative waits are none (a NaN deadline would break the heap's order).
        let wait = seconds > 0 ? seconds : 0
        return state.withLock { state in
            let order = state.nextOrder
            state.nextOrder += 1
            state.add(Sleeper(deadline: self.now + wait, order: order, group: group, wake: .action(action)))
            return order
        }
    }

    /// Takes back a deadline of ``schedule(after:group:_:)`` that has not come due: its
    /// action will not run. Nothing happens for one that has.
    public func cancelScheduled(_ order: Int) {
        state.withLock { state in
            guard case .action? = state.sleepers[order]?.wake else { return }
            state.sleepers[order] = nil
        }
    }

    /// A deadline that is not a task: ``schedule(after:group:_:)``, taken back by
    /// ``ClockTimer/cancel()``.
    public func startTimer(after seconds: Double, _ action: @escaping @Sendable () -> Void) -> ClockTimer {
        ClockTimer(.virtual(self, schedule(after: seconds, action)))
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
        for sleeper in due { sleeper.wake.fire() }
        return due.count
    }

    /// Moves the clock `seconds` forward, resuming every sleeper due by then, earliest
    /// first, and running each due deadline's action in its place. Returns how many came
    /// due. (A resumed task runs when the executor next runs it: a test awaits what it
    /// expects of it, as it would of any task.)
    @discardableResult
    public func advance(by seconds: Double) -> Int {
        let due = state.withLock { state -> [Sleeper] in
            let now = self.now + max(0, seconds)
            reading.store(now.bitPattern, ordering: .releasing)
            return state.takeDue(now: now)
        }
        for sleeper in due { sleeper.wake.fire() }
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
