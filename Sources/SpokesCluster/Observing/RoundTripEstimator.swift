/// The heartbeat round trip to one peer, from heartbeats and their acknowledgements.
/// Sans-IO: times go in, the estimate comes out.
///
/// Only the latest heartbeat is timed: an acknowledgement of an older one (it crossed a
/// newer heartbeat on the wire) is ignored, so a slow ack never counts against a newer
/// send. The estimate is smoothed as TCP smooths its own (RFC 6298: 7/8 old + 1/8 new),
/// starting from the first sample.
public struct RoundTripEstimator: Sendable, Hashable {
    private var outstandingSequence: UInt64?
    private var outstandingSentAt = 0.0
    /// The smoothed round trip in seconds; nil before the first acknowledgement.
    public private(set) var smoothed: Double?
    /// The latest sample in seconds.
    public private(set) var latest: Double?

    public init() {}

    /// A heartbeat with `sequence` left at `time` (monotonic seconds).
    public mutating func sent(sequence: UInt64, at time: Double) {
        outstandingSequence = sequence
        outstandingSentAt = time
    }

    /// The acknowledgement of `sequence` arrived at `time`; returns the sample it gave, or
    /// nil when it does not answer the latest heartbeat (or answers it a second time).
    @discardableResult
    public mutating func acknowledged(sequence: UInt64, at time: Double) -> Double? {
        guard sequence == outstandingSequence else { return nil }
        outstandingSequence = nil
        let sample = max(0, time - outstandingSentAt)
        latest = sample
        smoothed = smoothed.map { $0 * 7 / 8 + sample / 8 } ?? sample
        return sample
    }
}
