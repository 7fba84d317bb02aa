import Distributed
import Synchronization

/// A node's worker, in the SkyNet book's vocabulary: it runs tasks, at most `slots` at
/// a time. Every node hosts one under the well-known name `worker`.
///
/// Besides its slots a worker keeps a short queue (``queueLength(slots:)`` places): an
/// attempt that arrives while every slot is taken waits there, in arrival order, and
/// takes the first slot that frees. A coordinator sends a worker its next task before
/// the current one ends, so a slot never idles for a round trip (Dask's workers keep
/// such a queue for the same reason). A freed slot passes straight to the oldest queued
/// attempt, so a newcomer cannot overtake it.
///
/// The worker enforces its own limits, because several coordinators may send to it:
/// when every slot and queue place is taken, ``run(_:)`` answers ``TaskResult/busy``,
/// which is not a failure. `commit()` reserves a slot ahead of `run(_:)` (the book's
/// two-step); the scheduler skips it and lets `run(_:)` take the slot itself, saving a
/// round trip.
public distributed actor ScanSystem {
    public typealias ActorSystem = ClusterSystem

    public static let wellKnownName = "worker"

    /// Fault injection: every Nth task fails (0: never), and each task waits this long first.
    public struct Faults: Sendable, Hashable {
        public var failEvery: Int
        public var slowMilliseconds: Int

        public init(failEvery: Int = 0, slowMilliseconds: Int = 0) {
            self.failEvery = failEvery
            self.slowMilliseconds = slowMilliseconds
        }
    }

    private let slots: Int
    private let registry: TaskRegistry
    private let faults: Faults
    private let counters: TaskCounters
    private let timeline: TaskTimeline?
    private var reserved = 0
    /// Slots held by running attempts (a slot passed to a queued attempt stays held).
    private var occupied = 0
    private var running: [String: Task<String, any Error>] = [:]
    /// Attempts waiting for a slot, oldest first; resumed with true when given one.
    private var queue: [(key: String, resume: CheckedContinuation<Bool, Never>)] = []
    private var started = 0

    /// Places in the queue of a worker with `slots` slots: a tenth of them, at least one
    /// (as Dask saturates a worker at 1.1 x its threads). Coordinators compute it from the
    /// slots a member announces, so both sides agree without asking.
    public static func queueLength(slots: Int) -> Int {
        max(1, (slots + 9) / 10)
    }

    public init(
        actorSystem: ClusterSystem, slots: Int, registry: TaskRegistry, faults: Faults = Faults(),
        counters: TaskCounters = TaskCounters(), timeline: TaskTimeline? = nil
    ) {
        self.actorSystem = actorSystem
        self.slots = slots
        self.registry = registry
        self.faults = faults
        self.counters = counters
        self.timeline = timeline
    }

    /// Tasks running or reserved now.
    public distributed var count: Int {
        occupied + reserved
    }

    /// Tasks waiting in the queue now.
    public distributed var queued: Int {
        queue.count
    }

    /// Reserves a slot for a coming `run(_:)`; false when the worker is full.
    public distributed func commit() -> Bool {
        guard count < slots else { return false }
        reserved += 1
        return true
    }

    /// Runs a task in a free (or reserved) slot, waits for one in the queue, or answers
    /// `.busy` when the queue is full too.
    public distributed func run(_ request: TaskRequest) async throws -> TaskResult {
        do {
            try request.checkRanges()
        } catch {
            if reserved > 0 { reserved -= 1 }
            throw error
        }
        guard registry.contains(request.kind) else {
            if reserved > 0 { reserved -= 1 }
            actorSystem.rejections.count(.unknownTaskKind)
            throw TaskError.unknownKind(request.kind)
        }
        if reserved > 0 {
            reserved -= 1
            occupied += 1
        } else if occupied < slots {
            occupied += 1
        } else if queue.count < Self.queueLength(slots: slots) {
            guard await waitForSlot(request.key) else { throw CancellationError() }
        } else {
            counters.answeredBusy()
            return .busy
        }
        defer { releaseSlot() }
        started += 1
        let number = started
        let context = TaskContext(system: actorSystem, job: request.job, task: request.task, attempt: request.attempt)
        let registry = registry
        let faults = faults
        let node = actorSystem.node.name
        let work = Task {
            if faults.slowMilliseconds > 0 { try await Task.sleep(for: .milliseconds(faults.slowMilliseconds)) }
            if faults.failEvery > 0, number % faults.failEvery == 0 {
                throw TaskError.injectedFailure(node: node, task: request.task)
            }
            return try await registry.run(request, context: context)
        }
        running[request.key] = work
        counters.started()
        let ticket = timeline?.begin(job: request.job, task: request.task, attempt: request.attempt)
        var outcome = TaskTimeline.Outcome.failed
        defer {
            running[request.key] = nil
            counters.finished(succeeded: outcome == .succeeded)
            if let ticket { timeline?.end(ticket, outcome: outcome) }
        }
        do {
            let output = try await withTaskCancellationHandler {
                try await work.value
            } onCancel: {
                work.cancel()
            }
            outcome = .succeeded
            return .done(output: output)
        } catch {
            outcome = error is CancellationError || work.isCancelled ? .cancelled : .failed
            throw error
        }
    }

    /// Cancels an attempt, running or queued (after its deadline passed on the coordinator).
    public distributed func cancel(_ key: String) {
        running[key]?.cancel()
        leaveQueue(key)
    }

    /// Waits in the queue until a slot is passed on (true), or the attempt is cancelled (false).
    private func waitForSlot(_ key: String) async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { queue.append((key, $0)) }
        } onCancel: {
            // Runs after the append: the actor is busy until this call suspends.
            Task { await self.leaveQueue(key) }
        }
    }

    private func leaveQueue(_ key: String) {
        guard let index = queue.firstIndex(where: { $0.key == key }) else { return }
        queue.remove(at: index).resume.resume(returning: false)
    }

    /// Passes a freed slot to the oldest queued attempt, or frees it.
    private func releaseSlot() {
        if queue.isEmpty {
            occupied -= 1
        } else {
            queue.removeFirst().resume.resume(returning: true)
        }
    }
}

/// A worker's task counts, readable from any thread (for `status` and the dashboard).
public final class TaskCounters: Sendable {
    private let active = Atomic<Int>(0)
    private let succeededCount = Atomic<Int>(0)
    private let failedCount = Atomic<Int>(0)
    private let busyCount = Atomic<Int>(0)

    public init() {}

    public var running: Int { active.load(ordering: .relaxed) }
    /// Attempts that ended with a result.
    public var succeeded: Int { succeededCount.load(ordering: .relaxed) }
    /// Attempts that ended with an error or were cancelled.
    public var failed: Int { failedCount.load(ordering: .relaxed) }
    /// Attempts that ended, either way.
    public var completed: Int { succeeded + failed }
    /// Attempts turned away with ``TaskResult/busy`` (every slot and queue place taken).
    public var busy: Int { busyCount.load(ordering: .relaxed) }

    func answeredBusy() { busyCount.add(1, ordering: .relaxed) }

    func started() { active.add(1, ordering: .relaxed) }

    func finished(succeeded: Bool) {
        active.subtract(1, ordering: .relaxed)
        if succeeded {
            succeededCount.add(1, ordering: .relaxed)
        } else {
            failedCount.add(1, ordering: .relaxed)
        }
    }
}
