import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// Deadlines on the machine's monotonic clock, all kept by one thread: what
/// ``RealClock/startTimer(after:_:)`` (and so every ``TimeoutTask`` on a machine) uses
/// instead of a task asleep in `Task.sleep` per deadline.
///
/// Why: a remote call and a task attempt each run under a deadline that almost never
/// passes (the call's reply comes in microseconds). As a sleeping task, each deadline cost
/// a task made, `Task.sleep` arming a Dispatch timer (a write to the Dispatch manager
/// thread's eventfd, so a wake-up of that thread and a context switch), then the task
/// cancelled, woken and freed: measured, a quarter of all the CPU of a no-op task
/// (BENCHMARKS.md, "A deadline without a task"). Here arming a deadline is a lock, a heap
/// insert and a dictionary insert, and cancelling it a dictionary removal; the thread is
/// woken only when a new deadline comes before every other (rare: most deadlines of a
/// kind have the same length, so each is later than the ones before it).
///
/// A cancelled deadline stays in the heap until it reaches the top or the heap is
/// compacted (when it holds more than twice the live deadlines, plus 64), so memory is
/// bounded by the deadlines armed and not yet passed or cancelled.
///
/// Actions run on the timer's thread, one after another: they must be short and must
/// not block (resuming a continuation, cancelling a task). The thread lives as long as
/// the process; it is started by the first deadline.
public final class DeadlineTimer: Sendable {
    /// A deadline armed with ``schedule(after:_:)``, for ``cancel(_:)``.
    public struct Token: Sendable, Hashable {
        fileprivate let id: UInt64
    }

    private struct Entry: HeapOrdered {
        var deadline: Double
        var id: UInt64

        func precedes(_ other: Entry) -> Bool { deadline < other.deadline }
    }

    private struct State {
        /// A binary min-heap by deadline; it may hold cancelled ids (not in `actions`).
        var heap = MinHeap<Entry>()
        var actions: [UInt64: @Sendable () -> Void] = [:]
        var nextID: UInt64 = 0
        /// The deadline the thread waits for (infinity: none; it waits to be signalled).
        var armedFor = Double.infinity
        var started = false
    }

    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    /// The thread's name (`top -H`, `perf`).
    public let name: String

    /// The process's timer for ``RealClock``.
    public static let shared = DeadlineTimer(name: "spokes.deadlines")

    /// A timer whose thread (named `name`) starts with its first deadline.
    public init(name: String) {
        self.name = name
    }

    /// Deadlines armed and neither passed nor cancelled.
    public var pending: Int { state.withLock { $0.actions.count } }

    /// Entries in the heap, cancelled ones included (for tests: the compaction's bound).
    var storedEntries: Int { state.withLock { $0.heap.count } }

    /// Runs `action` on the timer's thread once `seconds` have passed on the monotonic
    /// clock, unless ``cancel(_:)`` comes first. NaN, zero and negative seconds pass at
    /// once (the action still runs on the thread, never in the caller); at most 10^9
    /// seconds, as ``RealClock/sleep(for:)``.
    @discardableResult
    public func schedule(after seconds: Double, _ action: @escaping @Sendable () -> Void) -> Token {
        let deadline = Self.now + (seconds > 0 ? min(seconds, 1e9) : 0)
        let (token, signal, start) = state.withLock { state -> (Token, Bool, Bool) in
            let id = state.nextID
            state.nextID &+= 1
            state.actions[id] = action
            state.heap.insert(Entry(deadline: deadline, id: id))
            if state.heap.count > 2 * state.actions.count + 64 { Self.compact(&state) }
            let start = !state.started
            state.started = true
            guard deadline < state.armedFor else { return (Token(id: id), false, start) }
            state.armedFor = deadline
            return (Token(id: id), true, start)
        }
        if start { startThread() }
        if signal { wake.signal() }
        return token
    }

    /// Disarms `token`'s deadline. True when it was still armed (its action will not
    /// run); false when it had passed (its action runs or ran) or was cancelled before.
    @discardableResult
    public func cancel(_ token: Token) -> Bool {
        state.withLock { $0.actions.removeValue(forKey: token.id) } != nil
    }

    private func startThread() {
        PlainThread.start(name: name) { [self] in run() }
    }

    /// The thread's loop: run the actions that are due, then wait for the earliest
    /// deadline left, or for a signal that an earlier one was armed.
    private func run() {
        while true {
            let now = Self.now
            let (due, next) = state.withLock { state -> ([@Sendable () -> Void], Double) in
                var due: [@Sendable () -> Void] = []
                while let top = state.heap.first {
                    let live = state.actions[top.id] != nil
                    guard !live || top.deadline <= now else { break }
                    state.heap.removeFirst()
                    if live, let action = state.actions.removeValue(forKey: top.id) { due.append(action) }
                }
                state.armedFor = state.heap.first?.deadline ?? .infinity
                return (due, state.armedFor)
            }
            for action in due { action() }
            guard due.isEmpty else { continue }
            RealClock.wait(on: wake, until: next)
        }
    }

    /// Seconds on the machine's clock (``RealClock``): one reading of `CLOCK_MONOTONIC` for
    /// the whole runtime.
    private static var now: Double { RealClock().now }

    private static func compact(_ state: inout State) {
        let actions = state.actions
        state.heap = MinHeap(state.heap.unordered.filter { actions[$0.id] != nil })
    }
}
