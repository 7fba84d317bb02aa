import Synchronization

/// What one reader of a ``SimulatedNetwork`` takes, in order: a stream direction's
/// chunks, or a datagram port's datagrams. `AsyncStream`'s behaviour for its one reader
/// (unbounded, in order, what is left still read after ``finish()``), without its
/// generic storage, whose yield and next were a tenth of a simulation's time.
///
/// It hands over the same way, so a simulation runs the same jobs: an element yielded
/// while the reader waits resumes it (one job for the executor); one yielded meanwhile
/// waits here, and the reader's next ``next()`` takes it without suspending.
///
/// Its reader's task is never cancelled (the network's readers end by ``finish()``):
/// a reader waits here until an element or the finish comes, cancelled or not.
final class SimulatedQueue<Element: Sendable>: Sendable {
    private struct State {
        var buffer: [Element] = []
        /// Where the next element to read is in ``buffer`` (those before it were read).
        var head = 0
        var finished = false
        /// The reader, while it waits for an element.
        var reader: UnsafeContinuation<Element?, Never>?

        mutating func take() -> Element? {
            guard head < buffer.count else { return nil }
            let element = buffer[head]
            head += 1
            if head == buffer.count {
                buffer.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 64, head * 2 >= buffer.count {
                buffer.removeFirst(head)
                head = 0
            }
            return element
        }
    }

    private let state = Mutex(State())

    /// What the reader finds: an element, the end, or nothing yet.
    private enum Now {
        case element(Element)
        case end
        case wait
    }

    /// Hands `element` to the reader: at once if it waits, else when it next reads.
    /// Dropped once the queue is finished.
    func yield(_ element: Element) {
        let waiting = state.withLock { state -> UnsafeContinuation<Element?, Never>? in
            guard !state.finished else { return nil }
            if let reader = state.reader {
                state.reader = nil
                return reader
            }
            state.buffer.append(element)
            return nil
        }
        waiting?.resume(returning: element)
    }

    /// Ends the queue: the reader takes what is left, then nil.
    func finish() {
        let waiting = state.withLock { state -> UnsafeContinuation<Element?, Never>? in
            state.finished = true
            defer { state.reader = nil }
            return state.reader
        }
        waiting?.resume(returning: nil)
    }

    /// The next element, waiting for one; nil once the queue is finished and empty.
    /// One reader at a time.
    func next() async -> Element? {
        let now = state.withLock { state -> Now in
            if let element = state.take() { return .element(element) }
            return state.finished ? .end : .wait
        }
        switch now {
        case .element(let element): return element
        case .end: return nil
        case .wait: break
        }
        return await withUnsafeContinuation { (reader: UnsafeContinuation<Element?, Never>) in
            // Again under the lock: an element (or the finish) may have come meanwhile.
            let now = state.withLock { state -> Now in
                if let element = state.take() { return .element(element) }
                if state.finished { return .end }
                state.reader = reader
                return .wait
            }
            switch now {
            case .element(let element): reader.resume(returning: element)
            case .end: reader.resume(returning: nil)
            case .wait: break
            }
        }
    }
}
