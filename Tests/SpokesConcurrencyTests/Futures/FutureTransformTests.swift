import Testing
@testable import SpokesConcurrency

@Suite struct FutureTransformTests {
    @Test func mapValueTransformsSuccessAndKeepsFailure() {
        #expect(Future<Int, TestError>.preResolved(value: 2).mapValue { "\($0 * 2)" }.currentResult == .success("4"))
        #expect(Future<Int, TestError>.preRejected(error: TestError(code: 1)).mapValue { $0 * 2 }.currentResult == .failure(TestError(code: 1)))
    }

    @Test func mapErrorTransformsFailureAndKeepsSuccess() {
        struct Other: Error, Equatable { var text: String }
        let failed = Future<Int, TestError>.preRejected(error: TestError(code: 9)).mapError { Other(text: "\($0.code)") }
        #expect(failed.currentResult == .failure(Other(text: "9")))
        #expect(Future<Int, TestError>.preResolved(value: 1).mapError { _ in Other(text: "") }.currentResult == .success(1))
    }

    @Test func mapResultMapsBothSides() {
        let mapped = Future<Int, TestError>.preResolved(value: 6).mapResult { result -> Result<String, TestError> in
            switch result {
            case .success(let value) where value < 5: .success("\(value)")
            case .success: .failure(TestError(code: 100))
            case .failure(let error): .failure(error)
            }
        }
        #expect(mapped.currentResult == .failure(TestError(code: 100)))
    }

    @Test func mapsLaterWhenTheSourceCompletesLater() {
        let promise = Promise<Int, TestError>()
        let mapped = promise.future.mapValue { $0 + 1 }
        #expect(!mapped.isComplete)
        promise.resolve(1)
        #expect(mapped.currentResult == .success(2))
    }

    @Test func flatMapFailsWithAMappingErrorThatNamesTheValueAndType() throws {
        let mapped = Future<Int, TestError>.preResolved(value: 3).flatMap { $0 < 3 ? "\($0)" : nil }
        guard case .failure(let error) = mapped.currentResult, case .mappingError(let value) = error else {
            Issue.record("expected a mapping error, got \(String(describing: mapped.currentResult))")
            return
        }
        #expect(value == 3)
        #expect(error.description == "Could not map value: (3) to output type: String.")
    }

    @Test func flatMapPassesTheOriginalErrorAndSuccesses() {
        let failed = Future<Int, TestError>.preRejected(error: TestError(code: 4)).flatMap { "\($0)" }
        guard case .failure(.originalError(let error)) = failed.currentResult else {
            Issue.record("expected originalError")
            return
        }
        #expect(error == TestError(code: 4))
        #expect(Future<Int, TestError>.preResolved(value: 1).flatMap { "\($0)" }.currentResult.flatMap { try? $0.get() } == "1")
    }

    @Test func thenChainsAsynchronousWork() {
        let number = Promise<Int, TestError>()
        let call = Promise<String, TestError>()
        let log = Log<Int>()
        let chained = number.future.then { value in
            log.append(value)
            return call.future
        }
        number.resolve(5551234)
        #expect(log.values == [5551234])
        #expect(!chained.isComplete)
        call.resolve("hello")
        #expect(chained.currentResult == .success("hello"))
    }

    @Test func thenSkipsTheNextStepOnFailure() {
        let log = Log<Int>()
        let chained = Future<Int, TestError>.preRejected(error: TestError(code: 1)).then { value -> Future<Int, TestError> in
            log.append(value)
            return .preResolved(value: value)
        }
        #expect(log.values.isEmpty)
        #expect(chained.currentResult == .failure(TestError(code: 1)))
    }
}
