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
public final class PausableClock: RuntimeClock {
    /// The simulation's clock, which the driver moves.
    public let base: VirtualClock

    private struct Gate {
        var paused = false
        var nextWaiter = 0
        /// Sleepers that came due while paused, by order of arrival.
        var waiting: [Int: CheckedContinuation<Void, any Error>] = [:]
        /// Waiters cancelled before they were registered (the handler ran first).
        var cancelledEarly: Set<Int> = []
    }

    private let gate = Mutex(Gate())

    public init(base: VirtualClock) { self.base = base }

    public var now: Double { base.now }
    public var unixNow: Double { base.unixNow }

    /// Whether the node is paused now.
    public var isPaused: Bool { gate.withLock { $0.paused } }

    /// Sleeps on the shared clock, then, if the node is paused, until it resumes.
    public func sleep(for seconds: Double) async throws {
        try await base.sleep(for: seconds)
        try await waitWhilePaused()
    }

    /// Stops waking this node's sleepers until ``resume()``.
    public func pause() {
        gate.withLock { $0.paused = true }
    }

    /// Wakes every sleeper that came due during the pause, in the order they came due.
    public func resume() {
        let woken = gate.withLock { gate -> [CheckedContinuation<Void, any Error>] in
            gate.paused = false
            defer { gate.waiting.removeAll() }
            return gate.waiting.sorted { $0.key < $1.key }.map(\.value)
        }
        for continuation in woken { continuation.resume() }
    }

    private func waitWhilePaused() async throws {
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
                    gate.waiting[order] = continuation
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
                return waiter
            }
            waiter?.resume(throwing: CancellationError())
        }
    }
}
