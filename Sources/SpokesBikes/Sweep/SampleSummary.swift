/// The summary of one figure over the runs of a group: mean, spread, percentiles and a
/// 95% confidence interval of the mean.
///
/// - `standardDeviation` is the sample's (divided by n - 1); 0 for one value.
/// - Percentiles interpolate linearly between the closest ranks (rank (n - 1) p over
///   the sorted values, "type 7", as numpy and R do by default): `p50` is the median.
/// - `ci95` is mean ± t(0.975, n - 1) x s / sqrt(n), with Student's t (``StudentT``): the
///   interval that covers the true mean in 95% of sweeps when runs are independent and
///   their figure roughly normal. Absent for a single run, where there is no spread.
public struct SampleSummary: Sendable, Hashable, Codable {
    /// A closed interval of values.
    public struct Interval: Sendable, Hashable, Codable {
        public var lower: Double
        public var upper: Double

        public init(lower: Double, upper: Double) {
            self.lower = lower
            self.upper = upper
        }
    }

    public var mean: Double
    public var p50: Double
    public var p95: Double
    public var ci95: Interval?
    public var standardDeviation: Double
    public var minimum: Double
    public var maximum: Double

    /// The summary of `values`; nil when there are none. `tQuantile` gives
    /// t(0.975, degrees of freedom), so a caller summarising many groups can remember it.
    public init?(
        _ values: [Double],
        tQuantile: (Int) -> Double = { StudentT.quantile(0.975, degreesOfFreedom: $0) }
    ) {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let n = Double(values.count)
        mean = values.reduce(0, +) / n
        let mean = mean
        let squares = values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) }
        standardDeviation = values.count > 1 ? (squares / (n - 1)).squareRoot() : 0
        minimum = sorted[0]
        maximum = sorted[sorted.count - 1]
        p50 = Self.percentile(sorted, 0.5)
        p95 = Self.percentile(sorted, 0.95)
        if values.count > 1 {
            let half = tQuantile(values.count - 1) * standardDeviation / n.squareRoot()
            ci95 = Interval(lower: mean - half, upper: mean + half)
        } else {
            ci95 = nil
        }
    }

    /// The `p` percentile (p in [0, 1]) of ascending `sorted` values, not empty.
    static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        let rank = Double(sorted.count - 1) * min(max(p, 0), 1)
        let below = Int(rank.rounded(.down))
        let above = min(below + 1, sorted.count - 1)
        let fraction = rank - Double(below)
        return sorted[below] + (sorted[above] - sorted[below]) * fraction
    }
}
