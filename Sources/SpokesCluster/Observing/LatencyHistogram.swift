import Synchronization

/// Durations counted into fixed buckets, as a Prometheus histogram keeps them: how many
/// took at most each bound (cumulative), their sum and their count. Safe from any
/// thread; memory is fixed by the bounds, whatever is observed.
public final class LatencyHistogram: Sendable {
    /// The histogram at one moment.
    public struct Snapshot: Sendable, Hashable {
        /// An upper bound in seconds and how many observations were at most it.
        public struct Bucket: Sendable, Hashable {
            public var bound: Double
            public var count: Int

            public init(bound: Double, count: Int) {
                self.bound = bound
                self.count = count
            }
        }

        /// Each bound with how many observations were at most it (cumulative,
        /// ascending); the `+Inf` bucket is ``count``.
        public var buckets: [Bucket]
        /// Seconds observed in all.
        public var sum: Double
        public var count: Int

        public init(buckets: [Bucket], sum: Double, count: Int) {
            self.buckets = buckets
            self.sum = sum
            self.count = count
        }
    }

    /// A Raft commit's bounds: from 1 ms (a group on one machine) to 10 s (the proposal
    /// timeout's order).
    public static let raftCommitBounds = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    /// A timer's lateness beyond its interval: from 1 ms (an idle node) to 5 s (a node
    /// paused or starved, far past `heartbeat.dead_after`).
    public static let timerLatenessBounds = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

    /// Upper bounds in seconds, ascending.
    public let bounds: [Double]
    private let state: Mutex<(perBucket: [Int], sum: Double, count: Int)>

    /// A histogram of `bounds` (sorted here; NaN and duplicates dropped).
    public init(bounds: [Double]) {
        self.bounds = Array(Set(bounds.filter { !$0.isNaN })).sorted()
        state = Mutex((Array(repeating: 0, count: self.bounds.count), 0, 0))
    }

    /// Counts one duration of `seconds` (NaN and negative ones count as 0).
    public func observe(_ seconds: Double) {
        let value = seconds.isNaN ? 0 : max(0, seconds)
        let bucket = bounds.firstIndex { value <= $0 }
        state.withLock { state in
            if let bucket { state.perBucket[bucket] += 1 }
            state.sum += value
            state.count += 1
        }
    }

    public var snapshot: Snapshot {
        let (perBucket, sum, count) = state.withLock { $0 }
        var running = 0
        let buckets = zip(bounds, perBucket).map { bound, inBucket in
            running += inBucket
            return Snapshot.Bucket(bound: bound, count: running)
        }
        return Snapshot(buckets: buckets, sum: sum, count: count)
    }
}
