/// A min-heap of events ordered by (time, sequence number): events at the same virtual
/// time run in the order they were scheduled, so a run never depends on how a heap
/// breaks ties. The heap holds only concrete keys; the events themselves wait in a
/// slot array, so sifting moves no generic values (cheap even in a debug build).
struct EventQueue<Event> {
    private struct Key {
        var time: Double
        var sequence: UInt64
        var slot: Int

        func precedes(_ other: Key) -> Bool {
            time != other.time ? time < other.time : sequence < other.sequence
        }
    }

    private var heap: [Key] = []
    private var slots: [Event?] = []
    private var freeSlots: [Int] = []
    private var nextSequence: UInt64 = 0

    var isEmpty: Bool { heap.isEmpty }
    var count: Int { heap.count }

    mutating func push(_ event: Event, at time: Double) {
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            slots[slot] = event
        } else {
            slot = slots.count
            slots.append(event)
        }
        heap.append(Key(time: time, sequence: nextSequence, slot: slot))
        nextSequence += 1
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// The earliest event's time, and the event.
    mutating func pop() -> Scheduled<Event>? {
        guard !heap.isEmpty else { return nil }
        heap.swapAt(0, heap.count - 1)
        let key = heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var first = parent
            if left < heap.count, heap[left].precedes(heap[first]) { first = left }
            if right < heap.count, heap[right].precedes(heap[first]) { first = right }
            if first == parent { break }
            heap.swapAt(parent, first)
            parent = first
        }
        let event = slots[key.slot].take()!
        freeSlots.append(key.slot)
        return Scheduled(time: key.time, event: event)
    }
}

struct Scheduled<Event> {
    var time: Double
    var event: Event
}
