import SpokesCluster

/// One metric of the Prometheus text format: a name, its help line, its type and its
/// samples (one per set of label values). Values only: ``PrometheusText`` writes it out.
public struct MetricFamily: Sendable, Hashable {
    /// The metric types this node exports.
    public enum Kind: String, Sendable, Hashable {
        /// Only goes up (from 0 when the process starts); its name ends in `_total`.
        case counter
        /// Goes up and down: a count or an amount now.
        case gauge
        /// Observations counted into buckets: samples `_bucket{le="..."}` (cumulative, the
        /// last `le="+Inf"`), `_sum` and `_count` (``MetricFamily/histogram(_:help:_:)``).
        case histogram
    }

    /// One label: `state="alive"`.
    public struct Label: Sendable, Hashable {
        public var name: String
        public var value: String

        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// One time series: the family's name (and `suffix`) with these labels, and its value now.
    public struct Sample: Sendable, Hashable {
        public var labels: [Label]
        public var value: Double
        /// After the family's name: `_bucket`, `_sum` or `_count` in a histogram; empty otherwise.
        public var suffix: String

        public init(_ labels: [Label] = [], _ value: Double, suffix: String = "") {
            self.labels = labels
            self.value = value
            self.suffix = suffix
        }

        /// A sample with one label.
        public init(_ label: String, _ labelValue: String, _ value: Double) {
            self.init([Label(label, labelValue)], value)
        }
    }

    /// `spokes_members`: `[a-zA-Z_:][a-zA-Z0-9_:]*`.
    public var name: String
    /// What it measures, in one line.
    public var help: String
    public var kind: Kind
    public var samples: [Sample]

    public init(_ name: String, _ kind: Kind, help: String, samples: [Sample]) {
        self.name = name
        self.kind = kind
        self.help = help
        self.samples = samples
    }

    /// A family of one sample without labels.
    public init(_ name: String, _ kind: Kind, help: String, value: Double) {
        self.init(name, kind, help: help, samples: [Sample([], value)])
    }

    /// A family with one sample per value of `label`, in the order of `values`: every
    /// value listed gets its series, 0 when `counts` has none, so a series never vanishes.
    public init(_ name: String, _ kind: Kind, help: String, label: String, values: [String], counts: [String: Double]) {
        self.init(name, kind, help: help, samples: values.map { Sample(label, $0, counts[$0] ?? 0) })
    }

    /// A histogram family from `histogram`: a `_bucket` sample per bound and `+Inf`, then
    /// `_sum` and `_count`.
    public static func histogram(_ name: String, help: String, _ histogram: LatencyHistogram.Snapshot) -> MetricFamily {
        let buckets = histogram.buckets.map { Sample([Label("le", PrometheusText.format($0.bound))], Double($0.count), suffix: "_bucket") }
        return MetricFamily(name, .histogram, help: help, samples: buckets + [
            Sample([Label("le", "+Inf")], Double(histogram.count), suffix: "_bucket"),
            Sample([], histogram.sum, suffix: "_sum"),
            Sample([], Double(histogram.count), suffix: "_count"),
        ])
    }
}
