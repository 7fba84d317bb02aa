import Dispatch
import Testing
@testable import SpokesConcurrency

@Suite struct FutureAsyncTests {
    @Test func awaitingAFutureReturnsItsValue() async throws {
        let promise = Promise<Int, TestError>()
        DispatchQueue.global().async { promise.resolve(42) }
        #expect(try await promise.future.value == 42)
    }

    @Test func awaitingAFailedFutureThrowsItsTypedError() async {
        let future = Future<Int, TestError>.preRejected(error: TestError(code: 7))
        do {
            _ = try await future.value
            Issue.record("expected an error")
        } catch {
            #expect(error == TestError(code: 7), "the error is typed: no cast needed")
        }
    }

    @Test func aFutureCanBeMadeFromAnAsyncClosure() async throws {
        let future = Future<Int, any Error> {
            try await Task.sleep(for: .milliseconds(1))
            return 9
        }
        #expect(try await future.value == 9)
        let failing = Future<Int, any Error> { throw TestError(code: 5) }
        await #expect(throws: TestError(code: 5)) { try await failing.value }
    }

    @Test func aTypedFutureCanBeMadeFromAnAsyncResult() async {
        let future = Future<Int, TestError> { .failure(TestError(code: 3)) }
        #expect(await future.result == .failure(TestError(code: 3)))
    }

    @Test func manyAwaitersAllGetTheValue() async throws {
        let promise = Promise<Int, TestError>()
        let sum = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<500 { group.addTask { (try? await promise.future.value) ?? 0 } }
            promise.resolve(2)
            return await group.reduce(0, +)
        }
        #expect(sum == 1_000)
    }
}

@Suite struct NeverFailingFutureTests {
    @Test func aFutureThatCannotFailIsAwaitedWithoutTry() async {
        let promise = Promise<Int, Never>()
        promise.resolve(3)
        let value = await promise.future.value
        #expect(value == 3)
    }
}
