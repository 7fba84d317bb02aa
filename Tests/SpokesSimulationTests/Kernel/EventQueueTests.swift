import Testing
@testable import SpokesSimulation

@Suite struct EventQueueTests {
    @Test func eventsComeOutByTimeThenInTheOrderTheyWereScheduled() {
        var queue = EventQueue<String>()
        var random = SimulationRandom(seed: 5)
        var expected: [(Double, Int, String)] = []
        for number in 0..<500 {
            let time = Double(random.index(below: 20)) / 10
            queue.push("e\(number)", at: time)
            expected.append((time, number, "e\(number)"))
        }
        expected.sort { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }
        var popped: [String] = []
        while let next = queue.pop() { popped.append(next.event) }
        #expect(popped == expected.map(\.2))
    }

    @Test func slotsAreReusedAsEventsLeave() {
        var queue = EventQueue<Int>()
        for round in 0..<1000 {
            queue.push(round, at: Double(round))
            #expect(queue.pop()?.event == round)
        }
        #expect(queue.isEmpty)
    }
}
