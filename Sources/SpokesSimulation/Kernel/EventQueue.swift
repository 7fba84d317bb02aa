import SpokesConcurrency

/// A min-heap of events ordered by (time, sequence number): events at the same virtual
/// time run in the order they were scheduled, so a run never depends on how a heap
/// breaks ties. The heap holds only concrete keys; the events themselves wait in a
/// slot array, so sifting moves no generic values (cheap even in a debug build).
struct EventQueue<Event> {
    private struct Key: HeapOrdered {
        var time: Double
        var sequence: UInt64
        var slot: Int

        func precedes(_ other: Key) -> Bool {
            time != other.time ? time < other.time : sequence < other.sequence
        }
    }

    private var heap = MinHeap<Key>()
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
        heap.insert(Key(time: time, sequence: nextSequence, slot: slot))
        nextSequence += 1
    }

    /// The earliest event's time, and the event.
    mutating func pop() -> Scheduled<Event>? {
        guard let key = heap.removeFirst() else { return nil }
        let event = slots[key.slot].take()!
        freeSlots.append(key.slot)
        return Scheduled(time: key.time, event: event)
    }
}

struct Scheduled<Event> {
    var time: Double
    var event: Event
}
