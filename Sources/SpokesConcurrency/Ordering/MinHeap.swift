/// What a ``MinHeap`` orders: `precedes` is a strict order (never both ways), the
/// element that precedes every other comes out first.
public protocol HeapOrdered {
    func precedes(_ other: Self) -> Bool
}

/// A binary min-heap: insert and remove the first in O(log n), read the first in O(1).
/// The one heap of the clocks' deadlines (``DeadlineTimer``, ``VirtualClock``) and the
/// simulator's events. Elements that neither precede the other come out in no promised
/// order: where a run must not depend on it, the order breaks every tie (a sequence
/// number, as the simulator's events carry).
///
/// Inlinable, so each use is specialised for its element: the simulator sifts millions
/// of them a second.
public struct MinHeap<Element: HeapOrdered> {
    @usableFromInline var elements: [Element]

    @inlinable public init() { elements = [] }

    /// A heap of `elements`, in any order (O(n)).
    @inlinable public init(_ elements: [Element]) {
        self.elements = elements
        for index in stride(from: elements.count / 2 - 1, through: 0, by: -1) { siftDown(from: index) }
    }

    @inlinable public var count: Int { elements.count }
    @inlinable public var isEmpty: Bool { elements.isEmpty }
    /// The element that precedes every other, if any.
    @inlinable public var first: Element? { elements.first }
    /// Every element, in no particular order (to rebuild a heap without some of them).
    @inlinable public var unordered: [Element] { elements }

    @inlinable public mutating func insert(_ element: Element) {
        elements.append(element)
        var child = elements.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard elements[child].precedes(elements[parent]) else { break }
            elements.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the element that precedes every other (nil when empty).
    @inlinable @discardableResult public mutating func removeFirst() -> Element? {
        guard !elements.isEmpty else { return nil }
        elements.swapAt(0, elements.count - 1)
        let first = elements.removeLast()
        siftDown(from: 0)
        return first
    }

    @inlinable mutating func siftDown(from start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1, right = left + 1
            var first = parent
            if left < elements.count, elements[left].precedes(elements[first]) { first = left }
            if right < elements.count, elements[right].precedes(elements[first]) { first = right }
            guard first != parent else { return }
            elements.swapAt(parent, first)
            parent = first
        }
    }
}

extension MinHeap: Sendable where Element: Sendable {}
