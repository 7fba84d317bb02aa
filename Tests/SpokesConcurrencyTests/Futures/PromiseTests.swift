import Testing
@testable import SpokesConcurrency

struct TestError: Error, Equatable, CustomStringConvertible {
    var code: Int
    var description: String { "test error \(code)" }
}

@Suite struct PromiseTests {
    @Test func firstResolutionWinsAndLaterOnesAreIgnored() throws {
        let promise = Promise<Int, TestError>()
        #expect(promise.resolve(1))
        #expect(!promise.resolve(2))
        #expect(!promise.reject(TestError(code: 3)))
        #expect(!promise.complete(with: .success(4)))
        #expect(try promise.future.currentResult?.get() == 1)
    }

    @Test func firstRejectionWinsToo() {
        let promise = Promise<Int, TestError>()
        #expect(promise.reject(TestError(code: 1)))
        #expect(!promise.resolve(2))
        #expect(promise.future.currentResult == .failure(TestError(code: 1)))
    }

    @Test func manyThreadsRacingToResolveProduceOneOutcomeSeenByEveryCallback() {
        for round in 0..<20 {
            let promise = Promise<Int, TestError>()
            let seen = Log<Result<Int, TestError>>()
            let wins = Log<Int>()
            let finished = Threads.run(64) { index in
                if index.isMultiple(of: 2) {
                    promise.future.finally { seen.append($0) }
                } else if index.isMultiple(of: 3) {
                    if promise.reject(TestError(code: index)) { wins.append(index) }
                } else {
                    if promise.resolve(index) { wins.append(index) }
                }
            }
            #expect(finished, "threads did not finish in round \(round)")
            #expect(wins.values.count == 1, "exactly one resolution takes effect")
            #expect(seen.values.count == 32, "every callback runs exactly once")
            #expect(Set(seen.values.map { "\($0)" }).count == 1, "every callback sees the same outcome")
            #expect(seen.values.first == promise.future.currentResult)
        }
    }
}
