import SpokesConcurrency
import Synchronization

/// The task attempts a node's worker ran lately, and those it runs now: the rows and
/// bars of the dashboard's task stream.
///
/// Each attempt gets a slot (0-based): the lowest one no running attempt holds, so the
/// bars of one slot never overlap. An ended attempt gets the next sequence number, so a
/// reader asks for "everything after the last sequence I saw" and loses nothing that is
/// still kept. Memory is bounded: only the last `capacity` ended attempts are kept.
public final class TaskTimeline: Sendable {
    /// How an attempt ended.
    public enum Outcome: String, Sendable, Hashable, Codable {
        case running, succeeded, failed, cancelled
    }

    /// One attempt of one task on one slot.
    public struct Span: Sendable, Hashable, Codable {
        public var job: String
        public var task: Int
        public var attempt: Int
        public var slot: Int
        /// Monotonic seconds on the node that ran it.
        public var start: Double
        /// Nil while it runs.
        public var end: Double?
        public var outcome: Outcome
        /// Order of ending (0 while it runs).
        public var sequence: UInt64
    }

    /// A running attempt, to be ended with ``end(_:outcome:at:)``.
    public struct Ticket: Sendable, Hashable {
        let id: UInt64
    }

    private struct State {
        var running: [UInt64: Span] = [:]
        var ended: [Span] = []
        /// Index in `ended` of the oldest span once the buffer is full.
        var oldest = 0
        var nextTicket: UInt64 = 1
        var lastSequence: UInt64 = 0
    }

    public let capacity: Int
    /// The node's clock: what times are read from when none is given.
    private let clock: any RuntimeClock
    private let state = Mutex(State())

    public init(capacity: Int = 4096, clock: any RuntimeClock = RealClock()) {
        self.capacity = max(1, capacity)
        self.clock = clock
    }

    /// Records that an attempt started at `time`, in the lowest free slot.
    public func begin(job: String, task: Int, attempt: Int, at time: Double? = nil) -> Ticket {
        let time = time ?? clock.now
        return state.withLock { state in
            let taken = Set(state.running.values.map(\.slot))
            let slot = (0...).first { !taken.contains($0) }!
            let id = state.nextTicket
            state.nextTicket += 1
            state.running[id] = Span(job: job, task: task, attempt: attempt, slot: slot, start: time, end: nil, outcome: .running, sequence: 0)
            return Ticket(id: id)
        }
    }

    /// Records how the attempt of `ticket` ended; its slot is free again.
    public func end(_ ticket: Ticket, outcome: Outcome, at time: Double? = nil) {
        let time = time ?? clock.now
        state.withLock { state in
            guard var span = state.running.removeValue(forKey: ticket.id) else { return }
            state.lastSequence += 1
            span.end = max(time, span.start)
            span.outcome = outcome == .running ? .succeeded : outcome
            span.sequence = state.lastSequence
            if state.ended.count < capacity {
                state.ended.append(span)
            } else {
                state.ended[state.oldest] = span
                state.oldest = (state.oldest + 1) % capacity
            }
        }
    }

    /// The ended attempts with a sequence after `sequence` (at most the newest `limit`,
    /// oldest first), then every running one; and the last sequence given out.
    public func spans(after sequence: UInt64, limit: Int = 2000) -> (spans: [Span], lastSequence: UInt64) {
        state.withLock { state in
            let ordered = state.ended[state.oldest...] + state.ended[..<state.oldest]
            let newer = ordered.filter { $0.sequence > sequence }.suffix(max(0, limit))
            let running = state.running.values.sorted { $0.start < $1.start }
            return (Array(newer) + running, state.lastSequence)
        }
    }
}
