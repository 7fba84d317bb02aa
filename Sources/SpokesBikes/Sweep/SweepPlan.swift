/// The parameters of a sweep and the runs they expand to.
///
/// Every combination of the listed values is one run, in nested-loop order with the
/// parameters in ``SweepParameter`` order: `users` outermost, then `paths`, `goal`,
/// `moveTime`, `timeScale`, and `seed` innermost; each list in the order it was written.
/// So `--users 100,200 --seeds 1-3` runs (100, 1), (100, 2), (100, 3), (200, 1), ...:
/// the runs of a group are consecutive, and run `i` is ``run(at:)`` without expanding
/// the others.
///
/// ```swift
/// let plan = try SweepPlan(network: .bundled(name: .milano),
///                          lists: [.users: "100,200,400", .seed: "1-32"])
/// plan.runCount        // 96
/// plan.run(at: 32)     // users 200, seed 1
/// ```
public struct SweepPlan: Sendable, Hashable {
    /// Most runs a sweep may have: a long afternoon of 0.1 s runs on one machine, and a
    /// report (runs with their figures) of a few tens of megabytes at most.
    public static let maximumRuns = 100_000

    /// The network as the runs' task inputs carry it.
    public let networkSource: SweepNetwork
    /// The network's stations as every run starts with them.
    public let network: Network
    public let users: [Int]
    public let paths: [Int]
    /// Goal stations; `nil` is "no goal" (ride every path).
    public let goals: [String?]
    public let moveTimes: [Double]
    public let timeScales: [Double]
    public let seeds: [UInt64]
    /// Moves after which a user gives up, the same in every run.
    public let maxMoves: Int
    /// Whether each run's figures carry its per-user `results`.
    public let includeResults: Bool
    /// The product of the lists' lengths, at most ``maximumRuns``.
    public let runCount: Int

    /// A plan from values. Throws a ``SweepPlanError`` naming the first problem: an empty
    /// list, a value out of range or listed twice, too many runs, a network out of
    /// limits, or a value `SimulationOptions.validate` refuses for the network (such as a
    /// goal that is not one of its stations).
    public init(
        network: SweepNetwork, users: [Int], paths: [Int], goals: [String?] = [nil], moveTimes: [Double] = [MoveTiming().moveTime],
        timeScales: [Double] = [0], seeds: [UInt64], maxMoves: Int = SweepSetting.defaultMaxMoves, includeResults: Bool = false
    ) throws(SweepPlanError) {
        let lengths = [users.count, paths.count, goals.count, moveTimes.count, timeScales.count, seeds.count]
        for (parameter, length) in zip(SweepParameter.allCases, lengths) where length == 0 {
            throw .emptyList(parameter)
        }
        try Self.checkUnique(users.map(String.init), .users)
        try Self.checkUnique(paths.map(String.init), .paths)
        try Self.checkUnique(goals.map { $0.map { "'\($0)'" } ?? "no goal" }, .goal)
        try Self.checkUnique(moveTimes.map(\.formatted), .moveTime)
        try Self.checkUnique(timeScales.map(\.formatted), .timeScale)
        try Self.checkUnique(seeds.map(String.init), .seed)
        var count = 1
        for length in lengths {
            let (product, overflow) = count.multipliedReportingOverflow(by: length)
            guard !overflow else { throw .tooManyRuns(count: nil, maximum: Self.maximumRuns) }
            count = product
        }
        guard count <= Self.maximumRuns else { throw .tooManyRuns(count: count, maximum: Self.maximumRuns) }

        self.networkSource = network
        self.network = try network.resolve()
        self.users = users
        self.paths = paths
        self.goals = goals
        self.moveTimes = moveTimes
        self.timeScales = timeScales
        self.seeds = seeds
        self.maxMoves = maxMoves
        self.includeResults = includeResults
        runCount = count
        try checkEveryValue()
    }

    /// A plan from lists in ``SweepList`` syntax, keyed by parameter: `[.users: "100,200",
    /// .seed: "1-32"]`. A parameter not given takes its ``SweepParameter/defaultList``
    /// (no goal when `goal` is not given); the seeds must be given.
    public init(
        network: SweepNetwork, lists: [SweepParameter: String], maxMoves: Int = SweepSetting.defaultMaxMoves, includeResults: Bool = false
    ) throws(SweepPlanError) {
        func list(_ parameter: SweepParameter) throws(SweepPlanError) -> String {
            guard let text = lists[parameter] ?? parameter.defaultList else { throw .missing(parameter) }
            return text
        }
        try self.init(
            network: network,
            users: try SweepList.integers(try list(.users), for: .users),
            paths: try SweepList.integers(try list(.paths), for: .paths),
            goals: try lists[.goal].map { text throws(SweepPlanError) in try SweepList.stationIDs(text, for: .goal) } ?? [nil],
            moveTimes: try SweepList.numbers(try list(.moveTime), for: .moveTime),
            timeScales: try SweepList.numbers(try list(.timeScale), for: .timeScale),
            seeds: try SweepList.integers(try list(.seed), for: .seed).map { UInt64($0) },
            maxMoves: maxMoves, includeResults: includeResults)
    }

    /// Run `index` (0 ..< ``runCount``) in the documented order.
    public func run(at index: Int) -> SweepRun {
        precondition((0..<runCount).contains(index), "run \(index) of a sweep of \(runCount)")
        var rest = index
        func next(_ length: Int) -> Int {
            defer { rest /= length }
            return rest % length
        }
        let seed = seeds[next(seeds.count)]
        let timeScale = timeScales[next(timeScales.count)]
        let moveTime = moveTimes[next(moveTimes.count)]
        let goal = goals[next(goals.count)]
        let paths = paths[next(paths.count)]
        let users = users[next(users.count)]
        return SweepRun(
            setting: SweepSetting(users: users, paths: paths, goal: goal, moveTime: moveTime, timeScale: timeScale, maxMoves: maxMoves),
            seed: seed)
    }

    /// Every run, in order.
    public var runs: [SweepRun] { (0..<runCount).map(run(at:)) }

    /// The parameters with more than one value, seed excluded: what the report charts
    /// figures against.
    public var varied: [SweepParameter] {
        let lengths: [SweepParameter: Int] = [
            .users: users.count, .paths: paths.count, .goal: goals.count, .moveTime: moveTimes.count, .timeScale: timeScales.count,
        ]
        return SweepParameter.grouping.filter { (lengths[$0] ?? 0) > 1 }
    }

    /// The input of run `index`'s ``SweepRunTask``.
    public func taskInput(forRun index: Int) -> SweepRunTask.Input {
        SweepRunTask.Input(network: networkSource, run: run(at: index), includeResults: includeResults)
    }

    /// `SimulationOptions.validate` looks at each setting on its own (and the seed not at
    /// all), so checking every value of each list once, with the first value of every
    /// other list, checks every run.
    private func checkEveryValue() throws(SweepPlanError) {
        let first = run(at: 0)
        var candidates: [SweepRun] = [first]
        for value in users.dropFirst() { var run = first; run.setting.users = value; candidates.append(run) }
        for value in paths.dropFirst() { var run = first; run.setting.paths = value; candidates.append(run) }
        for value in goals.dropFirst() { var run = first; run.setting.goal = value; candidates.append(run) }
        for value in moveTimes.dropFirst() { var run = first; run.setting.moveTime = value; candidates.append(run) }
        for value in timeScales.dropFirst() { var run = first; run.setting.timeScale = value; candidates.append(run) }
        if let seed = seeds.first(where: { $0 > UInt64(Int.max) }) {
            throw .outOfRange(.seed, item: "\(seed)", expected: "at most \(Int.max)")
        }
        for run in candidates { try run.validate(for: network) }
    }

    private static func checkUnique(_ values: [String], _ parameter: SweepParameter) throws(SweepPlanError) {
        var seen = Set<String>()
        for value in values where !seen.insert(value).inserted { throw .duplicate(parameter, value: value) }
    }
}
