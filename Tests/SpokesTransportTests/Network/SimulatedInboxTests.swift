import SpokesConcurrency
import SpokesTestKit
import Synchronization
import Testing
@testable import SpokesTransport

/// What a simulated stream's or port's reader is handed: in order, one at a time, what is
/// left after the finish, nothing put after it or after the reader stopped, and a reader
/// that waits asked again on the clock. Inside a drain, each delivery run is a job of the
/// drain with no task of its own.
@Suite(.simulated) struct SimulatedInboxTests {
    /// What a reader was handed and how it ended.
    private final class Taken: Sendable {
        let state = Mutex((elements: [Int](), ends: 0, readersAtOnce: 0, mostAtOnce: 0))

        /// Enters, does `meanwhile`, and leaves in separate steps, so a hand-over begun
        /// while another runs (on another thread, or from within it) counts two at once.
        func take(_ element: Int, meanwhile: () -> Void = {}) {
            state.withLock { state in
                state.readersAtOnce += 1
                state.mostAtOnce = max(state.mostAtOnce, state.readersAtOnce)
                state.elements.append(element)
            }
            meanwhile()
            state.withLock { $0.readersAtOnce -= 1 }
        }

        var elements: [Int] { state.withLock { $0.elements } }
        var ends: Int { state.withLock { $0.ends } }
    }

    private final class Seen: Sendable {
        private let state = Mutex<[String]>([])
        func add(_ line: String) { state.withLock { $0.append(line) } }
        var lines: [String] { state.withLock { $0 } }
    }

    private static func settle() async {
        _ = await SimulationExecutor.untilIdle()
    }

    @Test func whatWasPutBeforeTheReaderCameIsHandedOverInOrderThenTheEnd() async {
        let inbox = SimulatedInbox<Int>(clock: VirtualClock())
        let taken = Taken()
        for number in 0..<200 { inbox.put(number) }
        // What the reader puts while it takes (as a node answers what it was handed) waits
        // its turn: it is not handed over from within the hand-over.
        inbox.start(SimulatedInbox.Reader(take: { number in
            taken.take(number) { if number == 5 { inbox.put(1_000) } }
            return true
        }, end: { taken.state.withLock { $0.ends += 1 } }))
        await Self.settle()
        inbox.put(200)
        inbox.finish()
        inbox.put(201)
        inbox.finish()
        await Self.settle()
        #expect(taken.elements == Array(0..<200) + [1_000, 200], "in order, the rest after the finish, nothing put after it")
        #expect(taken.ends == 1 && taken.state.withLock { $0.mostAtOnce } == 1, "one end; never two hand-overs at once")
    }

    @Test func aReaderThatStopsIsHandedNothingMoreAndHasNoEnd() async {
        let inbox = SimulatedInbox<Int>(clock: VirtualClock())
        let taken = Taken()
        inbox.start(SimulatedInbox.Reader(take: { taken.take($0); return $0 < 3 }, end: { taken.state.withLock { $0.ends += 1 } }))
        for number in 0..<10 { inbox.put(number) }
        await Self.settle()
        inbox.put(10)
        inbox.finish()
        await Self.settle()
        #expect(taken.elements == [0, 1, 2, 3] && taken.ends == 0)
    }

    @Test func aReaderThatWaitsIsAskedAgainOnTheClockAndHandedNothingMeanwhile() async {
        let clock = VirtualClock()
        let inbox = SimulatedInbox<Int>(clock: clock)
        let taken = Taken()
        let open = Atomic<Bool>(false)
        let asked = Atomic<Int>(0)
        inbox.start(SimulatedInbox.Reader(
            ready: {
                asked.add(1, ordering: .relaxed)
                return open.load(ordering: .acquiring) ? .now : .after(1)
            },
            take: { taken.take($0); return true }))
        await Self.settle()
        #expect(asked.load(ordering: .relaxed) == 0, "nothing waits: nothing to ask")
        inbox.put(1)
        inbox.put(2)
        await Self.settle()
        #expect(taken.elements.isEmpty && clock.sleepers == 1, "it waits on the clock")
        clock.advance(by: 1)
        await Self.settle()
        #expect(taken.elements.isEmpty && asked.load(ordering: .relaxed) == 2, "asked again after its wait")
        open.store(true, ordering: .releasing)
        clock.advance(by: 1)
        await Self.settle()
        #expect(taken.elements == [1, 2] && clock.sleepers == 0)
    }

    @Test func aDeliveryInADrainIsAJobOfItsOwnAndWhatItStartsIsTheDrains() async {
        let inbox = SimulatedInbox<Int>(clock: VirtualClock())
        let seen = Seen()
        inbox.start(SimulatedInbox.Reader(take: { number in
            seen.add("took \(number): current \(SimulationExecutor.isCurrent)")
            Task { seen.add("its task: current \(SimulationExecutor.isCurrent)") }
            return true
        }))
        inbox.put(1)
        seen.add("put")
        await Self.settle()
        #expect(seen.lines == ["put", "took 1: current true", "its task: current true"],
                "handed over in a job after the putter's, with the drain's task-locals")
    }
}
