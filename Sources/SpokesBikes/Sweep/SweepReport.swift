/// What a sweep came to: every run with its parameters, node and figures, and the runs
/// grouped by setting (everything but the seed) with the statistics of each figure.
///
/// JSON (the shape of `spokes sweep --json`):
/// ```json
/// { "network": {"id": "bikemi", "name": "BikeMi", "stations": 318, "stationsWithNullCounts": 0},
///   "varied": ["users"],
///   "runs": [ {"users": 100, "paths": 10, "moveTime": 0.1, "timeScale": 0, "maxMoves": 1000000, "seed": 1,
///              "node": "n1", "waitingTimePerUser": 0.03, "totalWaitingTime": 3.1, "totalPaths": 1000,
///              "totalMoves": 2041, "failedTakes": 17, "failedLeaves": 14, "completedUsers": 100,
///              "usersReachedGoal": 0, "usersGaveUp": 0, "nominalDuration": 2.3, "wallTime": 0.02,
///              "bikesBefore": 4903, "bikesAfter": 4903, "conservation": {...}}, ... ],
///   "groups": [ {"users": 100, "paths": 10, "moveTime": 0.1, "timeScale": 0, "maxMoves": 1000000,
///                "runs": 32, "failedRuns": 0, "runsNotConserved": 0,
///                "waitingTimePerUser": {"mean": .., "p50": .., "p95": .., "ci95": {"lower": .., "upper": ..},
///                                       "standardDeviation": .., "minimum": .., "maximum": ..},
///                "totalPaths": {...}, "failedTakes": {...}, "failedLeaves": {...}}, ... ],
///   "runsPerNode": {"n1": 50, "n2": 46} }
/// ```
/// A run's parameters are under the flags' names, its figures under `simulate --json`'s
/// keys (``SweepRunFigures``); `goal` is absent when there is none, `results` unless the
/// sweep asked for them. A run whose every attempt failed has `failures` instead of
/// figures. `job` and `wallTime` are there when the report comes from a cluster job.
public struct SweepReport: Sendable, Hashable, Codable {
    /// One run and how it ended.
    public struct Run: Sendable, Hashable, Codable {
        public var run: SweepRun
        /// The node whose result was accepted; nil in one process or when the run failed.
        public var node: String?
        /// Nil when every attempt failed.
        public var figures: SweepRunFigures?
        /// Each failed attempt's reason (only for a run without figures).
        public var failures: [String]?

        /// A run that produced `figures` on `node`.
        public init(run: SweepRun, node: String?, figures: SweepRunFigures) {
            self.run = run
            self.node = node
            self.figures = figures
        }

        /// A run whose every attempt failed, for `reasons`.
        public init(run: SweepRun, failures reasons: [String]) {
            self.run = run
            failures = reasons
        }

        /// Nominal seconds a user waited on average in this run.
        public var waitingTimePerUser: Double? {
            figures.map { run.setting.users > 0 ? $0.totalWaitingTime / Double(run.setting.users) : 0 }
        }

        enum CodingKeys: String, CodingKey { case node, failures, waitingTimePerUser, totalPaths }

        public init(from decoder: any Decoder) throws {
            run = try SweepRun(from: decoder)
            let container = try decoder.container(keyedBy: CodingKeys.self)
            node = try container.decodeIfPresent(String.self, forKey: .node)
            failures = try container.decodeIfPresent([String].self, forKey: .failures)
            figures = container.contains(.totalPaths) ? try SweepRunFigures(from: decoder) : nil
        }

        public func encode(to encoder: any Encoder) throws {
            try run.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeIfPresent(node, forKey: .node)
            try container.encodeIfPresent(failures, forKey: .failures)
            try container.encodeIfPresent(waitingTimePerUser, forKey: .waitingTimePerUser)
            try figures?.encode(to: encoder)
        }
    }

    /// The runs of one setting, and the statistics of their figures.
    public struct Group: Sendable, Hashable, Codable {
        public var setting: SweepSetting
        /// Runs with figures: the statistics' sample size.
        public var runs: Int
        /// Runs whose every attempt failed (left out of the statistics).
        public var failedRuns: Int
        /// Runs whose conservation check failed (a bug, if ever non-zero).
        public var runsNotConserved: Int
        /// Nil when no run of the group has figures.
        public var waitingTimePerUser: SampleSummary?
        public var totalPaths: SampleSummary?
        public var failedTakes: SampleSummary?
        public var failedLeaves: SampleSummary?

        /// The summary of `figure`.
        public func summary(of figure: SweepFigure) -> SampleSummary? {
            switch figure {
            case .waitingTimePerUser: waitingTimePerUser
            case .totalPaths: totalPaths
            case .failedTakes: failedTakes
            case .failedLeaves: failedLeaves
            }
        }

        enum CodingKeys: String, CodingKey {
            case runs, failedRuns, runsNotConserved, waitingTimePerUser, totalPaths, failedTakes, failedLeaves
        }

        public init(from decoder: any Decoder) throws {
            setting = try SweepSetting(from: decoder)
            let container = try decoder.container(keyedBy: CodingKeys.self)
            runs = try container.decode(Int.self, forKey: .runs)
            failedRuns = try container.decode(Int.self, forKey: .failedRuns)
            runsNotConserved = try container.decode(Int.self, forKey: .runsNotConserved)
            waitingTimePerUser = try container.decodeIfPresent(SampleSummary.self, forKey: .waitingTimePerUser)
            totalPaths = try container.decodeIfPresent(SampleSummary.self, forKey: .totalPaths)
            failedTakes = try container.decodeIfPresent(SampleSummary.self, forKey: .failedTakes)
            failedLeaves = try container.decodeIfPresent(SampleSummary.self, forKey: .failedLeaves)
        }

        public func encode(to encoder: any Encoder) throws {
            try setting.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(runs, forKey: .runs)
            try container.encode(failedRuns, forKey: .failedRuns)
            try container.encode(runsNotConserved, forKey: .runsNotConserved)
            try container.encodeIfPresent(waitingTimePerUser, forKey: .waitingTimePerUser)
            try container.encodeIfPresent(totalPaths, forKey: .totalPaths)
            try container.encodeIfPresent(failedTakes, forKey: .failedTakes)
            try container.encodeIfPresent(failedLeaves, forKey: .failedLeaves)
        }

        init(setting: SweepSetting, runs: [Run], tQuantile: (Int) -> Double) {
            self.setting = setting
            let done = runs.filter { $0.figures != nil }
            self.runs = done.count
            failedRuns = runs.count - done.count
            runsNotConserved = done.count { $0.figures?.conservation.holds == false }
            func summary(_ figure: SweepFigure) -> SampleSummary? {
                SampleSummary(done.compactMap { figure.value(in: $0) }, tQuantile: tQuantile)
            }
            waitingTimePerUser = summary(.waitingTimePerUser)
            totalPaths = summary(.totalPaths)
            failedTakes = summary(.failedTakes)
            failedLeaves = summary(.failedLeaves)
        }
    }

    public var network: SimulationReport.NetworkSummary
    /// In the order given (a sweep's: ``SweepPlan``'s run order).
    public var runs: [Run]
    /// One per setting, in the order of each setting's first run.
    public var groups: [Group]
    /// The cluster job's id.
    public var job: String?
    /// Real seconds from the first run scheduled to the last result, on a cluster.
    public var wallTime: Double?

    /// Groups `runs` by setting and summarises each group.
    public init(network: Network, runs: [Run], job: String? = nil, wallTime: Double? = nil) {
        self.network = SimulationReport.NetworkSummary(
            id: network.id, name: network.name, stations: network.stations.count,
            stationsWithNullCounts: network.stationsWithNullCounts)
        self.runs = runs
        self.job = job
        self.wallTime = wallTime
        var order: [SweepSetting] = []
        var members: [SweepSetting: [Run]] = [:]
        for run in runs {
            if members[run.run.setting] == nil { order.append(run.run.setting) }
            members[run.run.setting, default: []].append(run)
        }
        var quantiles: [Int: Double] = [:]
        let tQuantile = { (degrees: Int) -> Double in
            if let known = quantiles[degrees] { return known }
            let value = StudentT.quantile(0.975, degreesOfFreedom: degrees)
            quantiles[degrees] = value
            return value
        }
        groups = order.map { Group(setting: $0, runs: members[$0] ?? [], tQuantile: tQuantile) }
    }

    /// The parameters (seed excluded) with more than one value among the groups, in
    /// ``SweepParameter`` order.
    public var varied: [SweepParameter] {
        SweepParameter.grouping.filter { parameter in
            Set(groups.compactMap { $0.setting.value(of: parameter) }).count > 1
        }
    }

    /// Node name -> runs whose result it produced.
    public var runsPerNode: [String: Int] {
        var counts: [String: Int] = [:]
        for run in runs { if let node = run.node { counts[node, default: 0] += 1 } }
        return counts
    }

    /// Runs whose every attempt failed.
    public var failedRuns: Int { groups.reduce(0) { $0 + $1.failedRuns } }

    /// Runs whose conservation check failed.
    public var runsNotConserved: Int { groups.reduce(0) { $0 + $1.runsNotConserved } }

    enum CodingKeys: String, CodingKey { case network, varied, runs, groups, runsPerNode, job, wallTime }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        network = try container.decode(SimulationReport.NetworkSummary.self, forKey: .network)
        runs = try container.decode([Run].self, forKey: .runs)
        groups = try container.decode([Group].self, forKey: .groups)
        job = try container.decodeIfPresent(String.self, forKey: .job)
        wallTime = try container.decodeIfPresent(Double.self, forKey: .wallTime)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(network, forKey: .network)
        try container.encode(varied.map(\.key), forKey: .varied)
        try container.encode(runs, forKey: .runs)
        try container.encode(groups, forKey: .groups)
        try container.encode(runsPerNode, forKey: .runsPerNode)
        try container.encodeIfPresent(job, forKey: .job)
        try container.encodeIfPresent(wallTime, forKey: .wallTime)
    }
}
