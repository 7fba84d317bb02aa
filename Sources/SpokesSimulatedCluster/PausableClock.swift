import SpokesConcurrency
import Synchronization

/// One node's view of a simulation's ``VirtualClock`` that can be paused, as a process
/// stopped by `SIGSTOP` is: while paused, its time still moves (``now`` is the shared
/// clock's, as a stopped process's monotonic clock moves on), but none of its sleepers
/// wakes; each one due meanwhile wakes when it resumes, all at once, late, as a resumed
/// process's overdue timers fire. ``SimulatedCluster/pause(_:)`` pairs it with a cut of
/// every link of the node's host, so nothing reaches the node or leaves it either.
///
/// What a paused node still does: work it had in hand when the pause began runs until
/// its next sleep or its next wait for the network (the node's tasks run on the shared
/// pool; only its timers and its network are stopped).
///
/// Its time can also jump (``jump(by:wallBy:)``), the others' staying where it is: the
/// node's monotonic clock leaps forward, so every sleeper whose deadline it leaps past
/// wakes at once, as timers do on a machine whose clock leapt (a VM resumed after a
/// host's pause); its wall clock (``unixNow``) may leap either way, as one stepped by
/// NTP does, and is stepped back by ``resetWallClock()``.
public final class PausableClock: RuntimeClock {
    /// The simulation's clock, which the driver moves.
    public let base: VirtualClock

    private struct Gate {
        var paused = false
        var nextWaiter = 0
        /// Sleepers that came due while paused, by order of arrival, with their deadlines
        /// on this clock.
        var waiting: [Int: (due: Double, continuation: CheckedContinuation<Void, any Error>)] = [:]
        /// Deadlines' actions (``startTimer(after:_:)``) that came due while paused, as
        /// ``waiting``'s sleepers.
        var deferred: [Int: (due: Double, action: @Sendable () -> Void)] = [:]
        /// Waiters cancelled before they were registered (the handler ran first).
        var cancelledEarly: Set<Int> = []
    }

    private let gate = Mutex(Gate())
    /// How far this node's wall clock is ahead of the shared one.
    private let wallOffset = Mutex(0.0)
    /// How far its monotonic clock is (a `Double`'s bits): read without a lock, as
    /// ``now`` is read many times per event; moved only by ``jump(by:wallBy:)``, under
    /// ``wallOffset``'s lock.
    private let monotonicOffset = Atomic<UInt64>(0.0.bitPattern)
    /// This clock's sleepers on ``base`` (``VirtualClock/sleep(for:group:)``).
    private let group: Int
    private static let groups = Atomic<Int>(0)

    public init(base: VirtualClock) {
        self.base = base
        group = Self.groups.add(1, ordering: .relaxed).newValue
    }

    public var now: Double { base.now + Double(bitPattern: monotonicOffset.load(ordering: .acquiring)) }
    public var unixNow: Double { base.unixNow + wallOffset.withLock { $0 } }

    /// Leaps this node's monotonic clock `seconds` forward (never back: it is monotonic),
    /// waking at once each of its sleepers whose deadline that passes, and its wall clock
    /// by `wallBy` (either way; forward by `seconds` too when nil). Returns how many
    /// sleepers woke. The shared clock and the other nodes do not move.
    @discardableResult
    public func jump(by seconds: Double, wallBy: Double? = nil) -> Int {
        let forward = max(0, seconds)
        wallOffset.withLock { wall in
            let monotonic = Double(bitPattern: monotonicOffset.load(ordering: .acquiring)) + forward
            monotonicOffset.store(monotonic.bitPattern, ordering: .releasing)
            wall += wallBy ?? forward
        }
        return base.bringForward(group: group, by: forward)
    }

    /// Steps the wall clock back in line with the shared one's (NTP correcting it); the
    /// monotonic clock keeps its leap.
    public func resetWallClock() {
        wallOffset.withLock { $0 = 0 }
    }

    /// Whether the node is paused now.
    public var isPaused: Bool { gate.withLock { $0.paused } }

    /// Sleeps on the shared clock, then, if the node is paused, until it resumes.
    public func sleep(for seconds: Double) async throws {
        let due = now + max(0, seconds)
        try await base.sleep(for: seconds, group: group)
        try await waitWhilePaused(due: due)
    }

    /// A deadline among this node's sleepers, with no task of its own
    /// (``VirtualClock/schedule(after:group:_:)``): a jump brings it forward, and one that
    /// comes due while the node is paused fires when it resumes, in turn with the sleepers,
    /// as a stopped process's overdue timer does. ``ClockTimer/cancel()`` takes it back
    /// even then.
    public func startTimer(after seconds: Double, _ action: @escaping @Sendable () -> Void) -> ClockTimer {
        let taken = TakenBack()
        let due = now + max(0, seconds)
        let order = base.schedule(after: seconds, group: group) { [self] in
            let awake = gate.withLock { gate -> Bool in
                guard gate.paused else { return true }
                let unlessTakenBack: @Sendable () -> Void = { if !taken.isSet { action() } }
                gate.deferred[gate.nextWaiter] = (due, unlessTakenBack)
                gate.nextWaiter += 1
                return false
            }
            if awake, !taken.isSet { action() }
        }
        return ClockTimer.cancelling { [base] in
            taken.set()
            base.cancelScheduled(order)
        }
    }

    /// Stops waking this node's sleepers until ``resume()``.
    public func pause() {
        gate.withLock { $0.paused = true }
    }

    /// Wakes every sleeper and fires every deadline that came due during the pause, in the
    /// order they came due (by their deadlines on this clock, which a jump does not reorder;
    /// at one deadline, in the order they arrived).
    public func resume() {
        let woken = gate.withLock { gate -> [(due: Double, order: Int, wake: @Sendable () -> Void)] in
            gate.paused = false
            defer { gate.waiting.removeAll(); gate.deferred.removeAll() }
            var woken: [(due: Double, order: Int, wake: @Sendable () -> Void)] = gate.deferred.map { ($0.value.due, $0.key, $0.value.action) }
            for (order, waiter) in gate.waiting {
                let continuation = waiter.continuation
                woken.append((waiter.due, order, { continuation.resume() }))
            }
            return woken.sorted { ($0.due, $0.order) < ($1.due, $1.order) }
        }
        for waiter in woken { waiter.wake() }
    }

    private func waitWhilePaused(due: Double) async throws {
        let order = gate.withLock { gate -> Int? in
            guard gate.paused else { return nil }
            defer { gate.nextWaiter += 1 }
            return gate.nextWaiter
        }
        guard let order else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Start { case wait, go, cancelled }
                let start = gate.withLock { gate -> Start in
                    if gate.cancelledEarly.remove(order) != nil { return .cancelled }
                    // Resumed between the two locks: no need to wait.
                    guard gate.paused else { return .go }
                    gate.waiting[order] = (due, continuation)
                    return .wait
                }
                switch start {
                case .wait: break
                case .go: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            let waiter = gate.withLock { gate -> CheckedContinuation<Void, any Error>? in
                guard let waiter = gate.waiting.removeValue(forKey: order) else {
                    gate.cancelledEarly.insert(order)
                    return nil
                }
                return waiter.continuation
            }
            waiter?.resume(throwing: CancellationError())
        }
    }
}

/// Whether a ``PausableClock`` deadline was taken back (its action must not run, even
/// one that came due during a pause and waits for the node to resume).
private final class TakenBack: Sendable {
    private let flag = Atomic<Bool>(false)

    var isSet: Bool { flag.load(ordering: .acquiring) }

    func set() { flag.store(true, ordering: .releasing) }
}
