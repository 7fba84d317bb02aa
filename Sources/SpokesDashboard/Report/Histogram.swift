import SpokesConcurrency

/// Counts of values in equal bins starting at zero, sized for a readable chart.
///
/// Values come in steps (waiting time in multiples of the move time, paths in whole
/// numbers): when the values span few enough steps, every step gets a bin of its own;
/// otherwise bins are a nice multiple (1, 2 or 5 x 10^n) of the step, so no bin holds
/// more possible values than its neighbour. Values that are not finite are left out
/// (and counted in ``ignored``); negative ones fall into the first bin.
struct Histogram: Sendable, Hashable {
    /// Values in `lower ..< upper` (`upper` included for the last bin).
    struct Bin: Sendable, Hashable {
        var lower: Double
        var upper: Double
        var count: Int
    }

    /// Empty when there were no finite values.
    let bins: [Bin]
    /// Width of every bin.
    let width: Double
    /// Values left out because they were NaN or infinite.
    let ignored: Int

    /// Bins `values` in steps of `step` (a non-positive or non-finite step means "any
    /// real number"), with at most `maximumBins` bins.
    init(values: [Double], step: Double, maximumBins: Int = 24) {
        let finite = values.filter(\.isFinite)
        ignored = values.count - finite.count
        let limit = max(1, maximumBins)
        let maximum = max(0, finite.max() ?? 0)
        let usableStep = step.isFinite && step > 0 ? step : 0
        var width: Double
        if usableStep > 0 {
            let stepsSpanned = Int(min((maximum / usableStep + 1e-9).rounded(.down), 1e9)) + 1
            width = stepsSpanned <= limit ? usableStep : usableStep * AxisTicks.niceStep(Double(stepsSpanned) / Double(limit))
        } else {
            width = maximum > 0 ? AxisTicks.niceStep(maximum / Double(limit)) : 1
        }
        if !(width.isFinite && width > 0) { width = 1 }
        self.width = width
        guard !finite.isEmpty else {
            bins = []
            return
        }
        let binCount = min(Int(saturating: (maximum / width + 1e-9).rounded(.down)), max(limit, 1) * 10 - 1) + 1
        var counts = [Int](repeating: 0, count: binCount)
        for value in finite {
            let index = Int(saturating: max(0, value / width + 1e-9).rounded(.down))
            counts[min(index, binCount - 1)] += 1
        }
        bins = counts.enumerated().map { index, count in
            Bin(lower: Double(index) * width, upper: Double(index + 1) * width, count: count)
        }
    }

    /// Values counted: the sum of every bin.
    var total: Int { bins.reduce(0) { $0 + $1.count } }

    /// The fullest bin's count (0 when there are no bins).
    var largestCount: Int { bins.map(\.count).max() ?? 0 }
}
