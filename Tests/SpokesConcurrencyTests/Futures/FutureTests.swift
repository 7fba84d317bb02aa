import Testing
@testable import SpokesConcurrency

@Suite struct FutureTests {
    @Test func callbacksAddedAfterCompletionRunAtOnce() {
        let future = Future<Int, TestError>.preResolved(value: 5)
        let log = Log<String>()
        future.onSuccess { log.append("success \($0)") }
        #expect(log.values == ["success 5"], "ran before onSuccess returned")
    }

    @Test func callbacksRunInTheOrderAddedAndFinallyComesAfterThem() {
        let promise = Promise<Int, TestError>()
        let log = Log<String>()
        promise.future
            .onSuccess { log.append("first \($0)") }
            .onFailure { _ in log.append("failure") }
            .onSuccess { log.append("second \($0)") }
            .finally { log.append("finally \((try? $0.get()) ?? -1)") }
        #expect(log.values.isEmpty)
        promise.resolve(7)
        #expect(log.values == ["first 7", "second 7", "finally 7"])
    }

    @Test func onlyFailureCallbacksRunOnFailure() {
        let log = Log<String>()
        Future<Int, TestError>.preRejected(error: TestError(code: 2))
            .onSuccess { _ in log.append("success") }
            .onError { log.append("error \($0.code)") }
            .onFailure { log.append("failure \($0.code)") }
        #expect(log.values == ["error 2", "failure 2"])
    }

    @Test func aCallbackMayAddCallbacksAndCompleteOtherPromises() {
        let first = Promise<Int, TestError>()
        let second = Promise<Int, TestError>()
        let log = Log<Int>()
        first.future.onSuccess { value in
            first.future.onSuccess { log.append($0 * 10) }
            second.resolve(value + 1)
        }
        first.resolve(1)
        #expect(log.values == [10])
        #expect(second.future.currentResult == .success(2))
    }

    @Test func preResolvedAndPreRejectedAreComplete() {
        #expect(Future<Int, TestError>.preResolved(value: 1).isComplete)
        #expect(Future<Int, TestError>.preRejected(error: TestError(code: 1)).currentResult == .failure(TestError(code: 1)))
        #expect(!Promise<Int, TestError>().future.isComplete)
    }
}

@Suite struct ResultCallbacksTests {
    @Test func resultSugarRunsTheMatchingBlock() {
        var log: [String] = []
        Result<Int, TestError>.success(1).onSuccess { log.append("s\($0)") }.onFailure { log.append("f\($0.code)") }
        Result<Int, TestError>.failure(TestError(code: 2)).onSuccess { log.append("s\($0)") }.onFailure { log.append("f\($0.code)") }
        #expect(log == ["s1", "f2"])
    }
}
