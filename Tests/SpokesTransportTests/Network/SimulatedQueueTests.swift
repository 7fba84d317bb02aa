import Testing
@testable import SpokesTransport

/// The queue behind a simulated stream's and port's reader: in order, what is left still
/// read after the finish, nothing taken after it, a waiting reader woken by either.
@Suite struct SimulatedQueueTests {
    @Test func whatWasYieldedBeforeTheReaderCameIsReadInOrderThenTheEnd() async {
        let queue = SimulatedQueue<Int>()
        for number in 0..<200 { queue.yield(number) }
        var read: [Int] = []
        for _ in 0..<150 { read.append(await queue.next() ?? -1) }
        queue.yield(200)
        queue.finish()
        queue.yield(201)
        while let number = await queue.next() { read.append(number) }
        #expect(read == Array(0...200), "in order, the rest after the finish, nothing yielded after it")
        #expect(await queue.next() == nil)
    }

    @Test func aWaitingReaderIsWokenByAYieldAndByTheFinish() async {
        let queue = SimulatedQueue<String>()
        let reader = Task {
            var read: [String] = []
            while let text = await queue.next() { read.append(text) }
            return read
        }
        for text in ["a", "b", "c"] {
            queue.yield(text)
            // Each handed over one at a time (the reader may or may not wait between them).
            await Task.yield()
        }
        queue.finish()
        #expect(await reader.value == ["a", "b", "c"])
    }
}
