import Foundation
import SpokesTestKit
import Synchronization
import Testing
@testable import SpokesConcurrency

/// The protocol's thread: tasks that prefer it run there, in order; its sleeps wake
/// from it and end at once when cancelled.
struct ProtocolExecutorTests {
    @Test func aTaskThatPrefersItRunsOnItsThreadBeforeAndAfterASuspension() async {
        let executor = ProtocolExecutor(name: "test.protocol")
        let onThread = await Task(executorPreference: executor) { () async -> [Bool] in
            let before = executor.isCurrentThread
            // A suspension resumed from another thread comes back here, not to the pool.
            await runBlocking("test.elsewhere") {}
            return [before, executor.isCurrentThread]
        }.value
        #expect(onThread == [true, true])
        #expect(!executor.isCurrentThread)
    }

    @Test func jobsRunOneAtATimeInTheOrderGiven() async {
        let executor = ProtocolExecutor(name: "test.protocol")
        let seen = Seen()
        let tasks = (0..<200).map { number in
            Task(executorPreference: executor) { seen.numbers.withLock { $0.append(number) } }
        }
        for task in tasks { await task.value }
        #expect(seen.numbers.withLock { $0 } == Array(0..<200))
    }

    @Test func aCancelledSleepEndsAtOnceWithCancellationError() async {
        let executor = ProtocolExecutor(name: "test.protocol")
        let sleeper = Task(executorPreference: executor) { () async -> Bool in
            do {
                try await executor.sleep(for: 3_600)
                return false
            } catch {
                return error is CancellationError
            }
        }
        sleeper.cancel()
        #expect(await sleeper.value)
        // Cancelled before it starts: it throws without sleeping.
        let early = Task(executorPreference: executor) { () async -> Bool in
            withUnsafeCurrentTask { $0?.cancel() }
            return (try? await executor.sleep(for: 3_600)) == nil
        }
        #expect(await early.value)
    }

    @Test func aSleepOfNothingReturnsAtOnce() async throws {
        let executor = ProtocolExecutor(name: "test.protocol")
        try await executor.sleep(for: 0)
        try await executor.sleep(for: -1)
        try await executor.sleep(for: .nan)
    }
}

/// Numbers in the order they were seen, from any thread.
private final class Seen: Sendable {
    let numbers = Mutex<[Int]>([])
}

/// With real time: its sleeps wake on time while every pool thread computes, which a
/// `Task.sleep` cannot (its wake-up waits for a pool thread).
@Suite(.processLane) struct ProtocolExecutorTimingTests {
    @Test func aSleepWakesOnTimeWhileThePoolIsBusy() async throws {
        let executor = ProtocolExecutor(name: "test.protocol")
        let clock = RealClock()
        // Every pool thread spins for 1.5 s without yielding (on purpose, bounded): the
        // pool is what user tasks that compute make of it.
        let spinners = (0..<(2 * ProcessInfo.processInfo.activeProcessorCount)).map { _ in
            Task.detached {
                let end = clock.now + 1.5
                while clock.now < end {}
            }
        }
        let lateness = await Task(executorPreference: executor) { () async -> Double in
            var worst = 0.0
            for _ in 0..<10 {
                let start = clock.now
                try? await executor.sleep(for: 0.05)
                worst = max(worst, clock.now - start - 0.05)
            }
            return worst
        }.value
        for spinner in spinners { await spinner.value }
        #expect(lateness < 0.25, "a protocol sleep woke \(lateness) s late while the pool was busy")
    }
}
