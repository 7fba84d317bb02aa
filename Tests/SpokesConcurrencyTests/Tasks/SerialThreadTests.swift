import SpokesTestKit
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

    /// The thread starts with the first block: one never given a block costs no thread
    /// (a connection whose writes all went in place).
    @Test func aThreadStartsWithItsFirstBlockAndNeverWithoutOne() async {
        let idle = SerialThread(name: "test.neverrun")
        #expect(!idle.isStarted)
        idle.finish()
        let used = SerialThread(name: "test.firstblock")
        #expect(!used.isStarted && !ProcessThreads.names().contains("test.firstblock"))
        await runBlocking("test.sync") { used.sync() }
        #expect(used.isStarted && ProcessThreads.names().contains("test.firstblock"))
        used.finish()
        #expect(!ProcessThreads.names().contains("test.neverrun"))
    }
}
