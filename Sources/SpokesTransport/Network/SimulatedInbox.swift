import SpokesConcurrency
import Synchronization

/// What one reader of a ``SimulatedNetwork`` takes, in order: a stream direction's
/// chunks, or a datagram port's datagrams, handed to the reader's callbacks as a socket's
/// reader thread hands them: one at a time, in order, never two at once.
///
/// No task reads: a delivery run is a job of the simulation's executor of its own
/// (``SimulationExecutor/perform(_:)``), queued in turn with the tasks' jobs where a
/// reader's task would have been resumed, and it hands over everything that waits, as
/// that task took what was buffered without suspending. A reader's task cost a
/// resumption (a task switch) for every chunk and datagram: about half of a simulated
/// cluster's jobs.
///
/// A reader may ask to wait before the next element (``Reader/ready``): a stream whose
/// link is cut holds its bytes until it heals. The run then asks again after that long
/// on the clock, and nothing else runs for the reader meanwhile.
final class SimulatedInbox<Element: Sendable>: Sendable {
    /// Whether the reader takes the next element now.
    enum Readiness {
        case now
        /// Ask again after this many seconds of the clock.
        case after(Double)
        /// Take nothing more: the reader ends (``Reader/end``) with what is left untaken.
        case end
    }

    /// The reader's callbacks, all called from one delivery run at a time.
    struct Reader: Sendable {
        /// Asked before each element is handed over (and before the end).
        var ready: @Sendable () -> Readiness = { .now }
        /// Takes one element; false when the reader stops (nothing more is handed over,
        /// and ``end`` is not called).
        var take: @Sendable (Element) -> Bool
        /// The inbox was finished and everything in it taken (or ``ready`` said to end).
        var end: @Sendable () -> Void = {}
    }

    private struct State {
        var buffer: [Element] = []
        /// Where the next element to hand over is in ``buffer`` (those before it were).
        var head = 0
        var finished = false
        var reader: Reader?
        /// A delivery run is queued, runs, or waits on the clock: no other may start.
        var running = false
        /// The reader stopped or ended: nothing more is kept or handed over.
        var done = false

        /// Marks a run as started if one should start now.
        mutating func startsRun() -> Bool {
            guard reader != nil, !running, !done else { return false }
            running = true
            return true
        }

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
    /// The clock a reader's wait (``Readiness/after(_:)``) is on.
    private let clock: any RuntimeClock

    init(clock: any RuntimeClock) {
        self.clock = clock
    }

    /// Keeps `element` for the reader, handed over in turn. Dropped once the inbox is
    /// finished or its reader is done.
    func put(_ element: Element) {
        let starts = state.withLock { state -> Bool in
            guard !state.finished, !state.done else { return false }
            state.buffer.append(element)
            return state.startsRun()
        }
        if starts { SimulationExecutor.perform { self.run() } }
    }

    /// Ends the inbox: the reader takes what is left, then its end.
    func finish() {
        let starts = state.withLock { state -> Bool in
            guard !state.finished else { return false }
            state.finished = true
            return state.startsRun()
        }
        if starts { SimulationExecutor.perform { self.run() } }
    }

    /// Starts handing over to `reader` (once; a second reader is ignored).
    func start(_ reader: Reader) {
        let starts = state.withLock { state -> Bool in
            guard state.reader == nil else { return false }
            state.reader = reader
            return state.startsRun()
        }
        if starts { SimulationExecutor.perform { self.run() } }
    }

    /// Hands over what waits, in order, until nothing does, the reader stops or ends, or
    /// it asks to wait (then this run goes on after that wait). Only this run takes from
    /// the buffer, so what it found waiting still waits when it takes it.
    private func run() {
        guard let reader = state.withLock({ $0.reader }) else { return }
        while true {
            let pending = state.withLock { state -> Bool in
                if state.head < state.buffer.count || state.finished { return true }
                state.running = false
                return false
            }
            guard pending else { return }
            switch reader.ready() {
            case .now:
                break
            case .after(let seconds):
                _ = clock.startTimer(after: seconds) { self.run() }
                return
            case .end:
                close()
                return reader.end()
            }
            guard let element = state.withLock({ $0.take() }) else {
                // Finished, and everything taken.
                close()
                return reader.end()
            }
            guard reader.take(element) else { return close() }
        }
    }

    /// Nothing more is kept or handed over; the reader is let go (its callbacks hold its
    /// stream or port, which holds this inbox).
    private func close() {
        state.withLock { state in
            state.done = true
            state.reader = nil
            state.buffer.removeAll()
            state.head = 0
        }
    }
}
