import SpokesTestKit
import Dispatch
import Synchronization
import Testing
@testable import SpokesConcurrency

@Suite(.processLane) struct TimeoutTaskTests {
    @Test func returnsTheValueBeforeTheDeadline() async throws {
        #expect(try await TimeoutTask(seconds: 10) { 7 }.value == 7)
        #expect(try await withTimeout(seconds: 10) { "done" } == "done")
    }

    @Test func rethrowsTheOperationsError() async {
        await #expect(throws: TestError(code: 1)) {
            try await TimeoutTask(seconds: 10) { () async throws -> Int in throw TestError(code: 1) }.value
        }
    }

    @Test func timesOutAndCancelsTheOperation() async {
        let cancelled = Promise<Bool, Never>()
        let task = TimeoutTask(seconds: 0.05) { () async throws -> Int in
            do {
                try await Task.sleep(for: .seconds(60))
            } catch {
                cancelled.resolve(Task.isCancelled)
                throw error
            }
            return 1
        }
        await #expect(throws: TimeoutError(seconds: 0.05)) { try await task.value }
        #expect(await cancelled.future.result == .success(true), "the operation saw its cancellation")
    }

    @Test func meetsTheDeadlineEvenWhenTheOperationIgnoresCancellation() async {
        let clock = ContinuousClock()
        let start = clock.now
        let task = TimeoutTask(seconds: 0.1) { () async -> Int in
            // Not cancellable: resumes only after 30 s whatever happens.
            await withCheckedContinuation { continuation in
                DispatchQueue.global().asyncAfter(deadline: .now() + 30) { continuation.resume() }
            }
            return 1
        }
        await #expect(throws: TimeoutError.self) { try await task.value }
        // Far below the operation's 30 s, with room for a loaded machine's slow timers.
        #expect(clock.now - start < .seconds(20), "the timeout did not wait for the operation")
    }

    @Test func anyDeadlineIsAcceptedWithoutTrapping() async throws {
        // Huge and infinite deadlines wait (the value comes first); `.seconds(1e21)` traps.
        for seconds: Double in [1e21, 1e300, .greatestFiniteMagnitude, .infinity] {
            #expect(try await withTimeout(seconds: seconds) { 3 } == 3, "deadline \(seconds)")
        }
        // NaN, negative and zero deadlines pass at once.
        for seconds: Double in [.nan, -1, -.infinity, 0] {
            await #expect(throws: TimeoutError.self, "deadline \(seconds)") {
                try await withTimeout(seconds: seconds) { () async throws -> Int in
                    try await Task.sleep(for: .seconds(60))
                    return 1
                }
            }
        }
    }

    @Test func cancelFromOutsideEndsItWithCancellationError() async {
        let task = TimeoutTask(seconds: 60) { () async throws -> Int in
            try await Task.sleep(for: .seconds(60))
            return 1
        }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    @Test func cancellingTheAwaitingTaskCancelsIt() async {
        let timeoutTask = TimeoutTask(seconds: 60) { () async throws -> Int in
            try await Task.sleep(for: .seconds(60))
            return 1
        }
        let waiter = Task { try await timeoutTask.value }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
    }

    @Test func everyAwaiterGetsTheSameOutcome() async {
        let task = TimeoutTask(seconds: 10) { () async throws -> Int in
            try await Task.sleep(for: .milliseconds(20))
            return 5
        }
        let values = await withTaskGroup(of: Int?.self) { group in
            for _ in 0..<50 { group.addTask { try? await task.value } }
            return await group.reduce(into: [Int?]()) { $0.append($1) }
        }
        #expect(values == Array(repeating: 5, count: 50))
    }

    @Test(.hangGuard)
    func racingCompletionTimeoutAndCancelNeverResumesTwice() async {
        // Operation, deadline and cancel() all land at about the same moment, thousands of
        // times. A double resume would crash the test process; a lost one would hang it.
        let outcomes = await withTaskGroup(of: String.self) { group in
            for index in 0..<3_000 {
                group.addTask {
                    let task = TimeoutTask(seconds: 0.001) { () async throws -> Int in
                        try await Task.sleep(for: .microseconds(900 + index % 200))
                        return index
                    }
                    if index.isMultiple(of: 3) { Task { task.cancel() } }
                    do {
                        _ = try await task.value
                        return "value"
                    } catch is TimeoutError {
                        return "timeout"
                    } catch is CancellationError {
                        return "cancelled"
                    } catch {
                        return "other \(error)"
                    }
                }
            }
            return await group.reduce(into: [String: Int]()) { $0[$1, default: 0] += 1 }
        }
        #expect(outcomes.values.reduce(0, +) == 3_000, "each task yields exactly one outcome: \(outcomes)")
        #expect(Set(outcomes.keys).isSubset(of: ["value", "timeout", "cancelled"]), "\(outcomes)")
    }
}
