import Foundation
import Testing
@testable import SpokesConcurrency

@Suite struct CriticalSectionTests {
    @Test func hundredThreadsOfAThousandIncrementsStayExact() {
        let section = CriticalSection()
        let counter = UnsafeCounter()
        let finished = Threads.run(100) { _ in
            for _ in 0..<1_000 { section.execute { counter.value += 1 } }
        }
        #expect(finished)
        #expect(counter.value == 100_000)
    }

    @Test func theThreadInsideMayEnterAgain() {
        let section = CriticalSection()
        let depth = section.execute {
            section.execute {
                section.executeWithTimeout(0.1) {} ? 3 : 2
            }
        }
        #expect(depth == 3, "re-entering from the holding thread neither deadlocks nor times out")
    }

    @Test func executeReturnsTheBodysValueAndReleasesOnThrow() {
        let section = CriticalSection()
        #expect(section.execute { 41 + 1 } == 42)
        #expect(throws: CocoaError.self) { try section.execute { throw CocoaError(.fileNoSuchFile) } }
        let entered = Threads.run(1, timeout: 5) { _ in
            #expect(section.executeWithTimeout(1) {}, "the lock was released after the throw")
        }
        #expect(entered)
    }

    @Test func threadsThatCannotWinTheLockInTimeGetFalse() {
        let section = CriticalSection()
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        Thread {
            section.execute {
                holding.signal()
                _ = release.wait(timeout: .now() + 30)
            }
        }.start()
        #expect(holding.wait(timeout: .now() + 10) == .success)
        let results = Log<Bool>()
        let ran = UnsafeCounter()
        let finished = Threads.run(25) { _ in
            results.append(section.executeWithTimeout(1.0) { ran.value += 1 })
        }
        release.signal()
        #expect(finished)
        #expect(results.values == Array(repeating: false, count: 25))
        #expect(ran.value == 0, "a body that did not win the lock never runs")
    }
}
