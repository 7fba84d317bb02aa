import Foundation
import Testing
@testable import SpokesConcurrency

@Suite struct ReadWriteCoordinatorTests {
    @Test func aReadSeesEveryWriteQueuedBeforeIt() {
        let coordinator = ReadWriteCoordinator()
        let list = UnsafeList()
        for index in 0..<100 {
            coordinator.enqueueWrite { list.items.append(index) }
        }
        let seen = coordinator.read { list.items }
        #expect(seen == Array(0..<100), "all 100 writes, in the order queued")
    }

    @Test func readsRunConcurrently() {
        let coordinator = ReadWriteCoordinator()
        let firstInside = DispatchSemaphore(value: 0)
        let secondInside = DispatchSemaphore(value: 0)
        let overlapped = Log<Bool>()
        let finished = Threads.run(2, timeout: 20) { index in
            coordinator.read {
                (index == 0 ? firstInside : secondInside).signal()
                // Each read waits, inside, for the other to be inside too.
                let other = index == 0 ? secondInside : firstInside
                overlapped.append(other.wait(timeout: .now() + 5) == .success)
            }
        }
        #expect(finished)
        #expect(overlapped.values == [true, true], "both reads were inside at the same time")
    }

    @Test func enqueueWriteReturnsBeforeTheWriteRuns() {
        let coordinator = ReadWriteCoordinator()
        let gate = DispatchSemaphore(value: 0)
        let list = UnsafeList()
        coordinator.enqueueWrite {
            _ = gate.wait(timeout: .now() + 10)
            list.items.append(1)
        }
        coordinator.enqueueWrite { list.items.append(2) }
        gate.signal()
        #expect(coordinator.read { list.items } == [1, 2])
    }
}

/// A list mutated only inside the coordinator's writes and read inside its reads, which
/// is the exclusion under test.
final class UnsafeList: @unchecked Sendable {
    var items: [Int] = []
}
