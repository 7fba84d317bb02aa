import Testing
@testable import SpokesConcurrency

@Suite struct FutureCombineTests {
    @Test func zipKeepsTheOrderOfItsInputsNotOfCompletion() {
        let promises = (0..<3).map { _ in Promise<Int, TestError>() }
        let zipped = Future.zip(promises.map(\.future))
        promises[2].resolve(30)
        promises[0].resolve(10)
        #expect(!zipped.isComplete)
        promises[1].resolve(20)
        #expect(zipped.currentResult == .success([10, 20, 30]))
    }

    @Test func zipFailsWithTheFirstFailure() {
        let promises = (0..<3).map { _ in Promise<Int, TestError>() }
        let zipped = Future.zip(promises.map(\.future))
        promises[0].resolve(1)
        promises[2].reject(TestError(code: 2))
        #expect(zipped.currentResult == .failure(TestError(code: 2)), "fails without waiting for the rest")
        promises[1].reject(TestError(code: 1))
        #expect(zipped.currentResult == .failure(TestError(code: 2)))
    }

    @Test func zipOfNothingIsAnEmptyList() {
        #expect(Future<Int, TestError>.zip([]).currentResult == .success([]))
    }

    @Test func firstFinishedTakesTheFirstSuccessEvenAfterFailures() {
        let promises = (0..<3).map { _ in Promise<Int, TestError>() }
        let first = Future.firstFinished(from: promises.map(\.future))
        promises[0].reject(TestError(code: 0))
        #expect(!first.isComplete)
        promises[2].resolve(2)
        promises[1].resolve(1)
        #expect(first.currentResult == .success(2))
    }

    @Test func firstFinishedFailsWithTheLastErrorWhenAllFail() {
        let promises = (0..<3).map { _ in Promise<Int, TestError>() }
        let first = Future.firstFinished(from: promises.map(\.future))
        promises[1].reject(TestError(code: 1))
        promises[0].reject(TestError(code: 0))
        #expect(!first.isComplete)
        promises[2].reject(TestError(code: 2))
        #expect(first.currentResult == .failure(TestError(code: 2)))
    }
}
