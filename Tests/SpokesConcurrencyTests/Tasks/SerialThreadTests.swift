import Synchronization
import Testing
@testable import SpokesConcurrency

/// Blocks run one at a time, in order, on a thread of their own.
struct SerialThreadTests {
    @Test func blocksRunInTheOrderGivenAndSyncWaitsForThem() async {
        let thread = SerialThread(name: "test.serial")
        defer { thread.finish() }
        let seen = Mutex<[Int]>([])
        let running = Atomic<Int>(0)
        let overlapped = Atomic<Bool>(false)
        for number in 0..<1_000 {
            thread.async {
                if running.wrappingAdd(1, ordering: .relaxed).newValue > 1 { overlapped.store(true, ordering: .relaxed) }
                seen.withLock { $0.append(number) }
                running.wrappingSubtract(1, ordering: .relaxed)
            }
        }
        await runBlocking("test.sync") { thread.sync() }
        #expect(seen.withLock { $0 } == Array(0..<1_000))
        let overlap = overlapped.load(ordering: .relaxed)
        #expect(!overlap, "two blocks ran at once")
    }

    @Test func afterFinishNothingMoreRunsAndSyncReturns() async {
        let thread = SerialThread(name: "test.serial")
        let ran = Atomic<Int>(0)
        thread.async { ran.wrappingAdd(1, ordering: .relaxed) }
        await runBlocking("test.sync") { thread.sync() }
        thread.finish()
        thread.async { ran.wrappingAdd(1, ordering: .relaxed) }
        await runBlocking("test.sync") { thread.sync() }
        let count = ran.load(ordering: .relaxed)
        #expect(count == 1)
    }
}
