import SpokesConcurrency
import SpokesTestKit
import Testing

/// A value and the order it was made in, so a test can see ties broken as asked.
private struct Ranked: HeapOrdered, Equatable {
    var rank: Int
    var order: Int

    func precedes(_ other: Ranked) -> Bool { rank < other.rank || (rank == other.rank && order < other.order) }
}

@Suite struct MinHeapTests {
    @Test func itGivesItsElementsBackInOrderAsASortedArrayWould() {
        // A model: 20,000 seeded inserts and removals, checked against a sorted array.
        var random = TestGenerator(seed: 7)
        var heap = MinHeap<Ranked>()
        var model: [Ranked] = []
        for order in 0..<20_000 {
            if random.next() % 3 == 0 {
                let expected = model.isEmpty ? nil : model.removeFirst()
                #expect(heap.removeFirst() == expected)
            } else {
                let element = Ranked(rank: Int(random.next() % 100), order: order)
                heap.insert(element)
                model.insert(element, at: model.firstIndex { element.precedes($0) } ?? model.count)
            }
            #expect(heap.count == model.count && heap.first == model.first)
        }
        while let expected = model.first {
            model.removeFirst()
            #expect(heap.removeFirst() == expected)
        }
        #expect(heap.isEmpty && heap.removeFirst() == nil)
    }

    @Test func aHeapMadeFromAnyOrderGivesThemBackSorted() {
        let elements = (0..<1_000).map { Ranked(rank: ($0 * 7_919) % 101, order: $0) }
        var heap = MinHeap(elements)
        var out: [Ranked] = []
        while let next = heap.removeFirst() { out.append(next) }
        #expect(out == elements.sorted { $0.precedes($1) })
    }
}
