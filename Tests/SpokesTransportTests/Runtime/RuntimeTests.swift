import SpokesConcurrency
import SpokesTransport
import Testing

@Suite struct RuntimeTests {
    @Test func aVirtualRuntimesSeedsAreTheSameEveryRun() {
        let first = Runtime.virtual(VirtualClock(), seed: 7)
        let again = Runtime.virtual(VirtualClock(), seed: 7)
        let other = Runtime.virtual(VirtualClock(), seed: 8)
        let a = (0..<4).map { _ in first.seed() }
        #expect(a == (0..<4).map { _ in again.seed() })
        #expect(a != (0..<4).map { _ in other.seed() })
        #expect(Set(a).count == 4)
    }
}
