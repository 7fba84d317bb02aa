import SpokesTestKit
import Synchronization
import Testing
@testable import SpokesConcurrency

@Suite(.processLane) struct DeadlineTimerTests {
    /// One timer (one thread) for the suite; each test uses deadlines of its own.
    static let timer = DeadlineTimer(name: "spokes.deadlines.tests")

    @Test func runsTheActionOnceItsDeadlinePassed() async {
        let fired = Promise<Double, Never>()
        let clock = RealClock()
        let start = clock.now
        Self.timer.schedule(after: 0.05) { fired.resolve(clock.now) }
        let at = await fired.future.value
        #expect(at - start >= 0.05, "fired after \(at - start) s")
    }

    @Test func aCancelledDeadlineNeverRuns() async {
        let ran = Atomic<Bool>(false)
        let token = Self.timer.schedule(after: 0.05) { ran.store(true, ordering: .relaxed) }
        #expect(Self.timer.cancel(token), "it was armed")
        #expect(!Self.timer.cancel(token), "cancelled once only")
        // A later deadline passing means the thread went past the cancelled one.
        let later = Promise<Void, Never>()
        Self.timer.schedule(after: 0.1) { later.resolve(()) }
        await later.future.value
        let didRun = ran.load(ordering: .relaxed)
        #expect(!didRun)
    }

    @Test func anEarlierDeadlineArmedLaterWakesTheThread() async {
        // The thread waits for the first (an hour away); the second must not wait for it.
        let far = Self.timer.schedule(after: 3_600) {}
        let clock = RealClock()
        let start = clock.now
        let near = Promise<Void, Never>()
        Self.timer.schedule(after: 0.02) { near.resolve(()) }
        await near.future.value
        #expect(clock.now - start < 20, "the near deadline waited for the far one")
        Self.timer.cancel(far)
    }

    @Test func deadlinesRunInTheirOrder() async {
        let order = Mutex<[Int]>([])
        let done = Promise<Void, Never>()
        for (index, seconds) in [0.06, 0.02, 0.04].enumerated() {
            Self.timer.schedule(after: seconds) {
                let count = order.withLock { $0.append(index); return $0.count }
                if count == 3 { done.resolve(()) }
            }
        }
        await done.future.value
        #expect(order.withLock { $0 } == [1, 2, 0])
    }

    @Test func nanNegativeAndZeroPassAtOnceOnTheThread() async {
        for seconds: Double in [.nan, -1, -.infinity, 0] {
            let fired = Promise<Void, Never>()
            Self.timer.schedule(after: seconds) { fired.resolve(()) }
            await fired.future.value
        }
    }

    @Test func cancelledDeadlinesDoNotPileUp() {
        // Calls that end long before their deadline: each is armed, then cancelled.
        let timer = DeadlineTimer(name: "spokes.deadlines.pile-up")
        for _ in 0..<10_000 { timer.cancel(timer.schedule(after: 3_600) {}) }
        #expect(timer.pending == 0)
        // Compacted whenever the heap holds more than twice the live deadlines plus 64
        // (checked as each is armed, with itself live): at most 2 x 1 + 64 + 1 stay.
        #expect(timer.storedEntries <= 67, "stored \(timer.storedEntries) entries for none armed")
    }

    @Test func theRealClocksTimerRunsAndCancels() async {
        let clock = RealClock()
        let fired = Promise<Void, Never>()
        _ = clock.startTimer(after: 0.01) { fired.resolve(()) }
        await fired.future.value
        let ran = Atomic<Bool>(false)
        clock.startTimer(after: 0.05) { ran.store(true, ordering: .relaxed) }.cancel()
        let later = Promise<Void, Never>()
        _ = clock.startTimer(after: 0.1) { later.resolve(()) }
        await later.future.value
        let didRun = ran.load(ordering: .relaxed)
        #expect(!didRun)
    }
}
