import SpokesBikes
import SpokesCluster

/// A bike job's exactly-once rules in the simulator (issue 18 §2): the real `JobLedger`
/// on the coordinator `c`, which holds the stations, and users run as attempts on workers
/// `w1`...`wN`, every move a message to `c`, as a cluster job runs them. The shell does
/// what `BikeJob` and `BikeUserTask` do: `c` starts an attempt of each user on a worker
/// (fencing off older ones with `beginAttempt`, and sending where the user resumes from),
/// gives an attempt up and starts another on another worker when the user has not ended
/// within `deadline`, and counts a user's result with `accept`; a worker walks its user
/// step by step (the station of step k is drawn from the user's seed and k, so a resumed
/// attempt goes on as the first would have), a take on foot and a leave when riding, and
/// stops when the coordinator refuses a move. Faults (crash, pause, slow, partitions,
/// loss, duplication, delay) hit the workers and the network.
///
/// Invariants, after every event:
/// - bikes are conserved: the bikes at the stations plus the users riding (as the ledger
///   has them) are always the bikes the job started with; no station ever holds fewer
///   than 0 bikes or more than its docks;
/// - each user's result is accepted once, and only its current attempt's.
///
/// Liveness, at the end: every user's result is in.
public struct BikeJobModel: SimulationModel {
    public struct Options: Sendable, Hashable {
        public var workers: Int
        public var users: Int
        public var paths: Int
        public var stations: Int
        public var bikesPerStation: Int
        public var docksPerStation: Int
        /// Seconds between a user's moves.
        public var moveTime: Double
        /// Seconds an attempt may take before another is started elsewhere.
        public var deadline: Double
        public var maxMoves: Int

        /// Defaults: a user walks for 2-4 virtual seconds, so faults in the first 8 seconds meet users on the way.
        public init(workers: Int = 3, users: Int = 12, paths: Int = 4, stations: Int = 4, bikesPerStation: Int = 2, docksPerStation: Int = 4,
                    moveTime: Double = 0.2, deadline: Double = 6, maxMoves: Int = 40) {
            self.workers = workers
            self.users = users
            self.paths = paths
            self.stations = stations
            self.bikesPerStation = bikesPerStation
            self.docksPerStation = docksPerStation
            self.moveTime = moveTime
            self.deadline = deadline
            self.maxMoves = maxMoves
        }
    }

    public enum Message: SimulationTraceable, Sendable {
        /// Run `user` as `attempt`, resuming from `progress`.
        case run(user: Int, attempt: Int, progress: UserProgress)
        case move(user: Int, attempt: Int, step: Int, station: Int, take: Bool)
        /// The move's outcome; nil when the coordinator refused it (a fenced or finished user).
        case moved(user: Int, attempt: Int, step: Int, succeeded: Bool?)
        case ended(user: Int, attempt: Int)

        public var description: String {
            switch self {
            case .run(let user, let attempt, let progress): "run user \(user) attempt \(attempt) from move \(progress.moves)"
            case .move(let user, let attempt, let step, let station, let take):
                "user \(user) attempt \(attempt) step \(step): \(take ? "take at" : "leave at") s\(station)"
            case .moved(let user, let attempt, let step, let succeeded):
                "user \(user) attempt \(attempt) step \(step): \(succeeded.map { $0 ? "done" : "failed" } ?? "refused")"
            case .ended(let user, let attempt): "user \(user) attempt \(attempt) ended"
            }
        }

        public func trace(into hasher: inout TraceHasher) {
            switch self {
            case .run(let user, let attempt, let progress):
                hasher.combine(1); hasher.combine(UInt64(user)); hasher.combine(UInt64(attempt)); hasher.combine(UInt64(progress.moves))
            case .move(let user, let attempt, let step, let station, let take):
                hasher.combine(2); hasher.combine(UInt64(user)); hasher.combine(UInt64(attempt)); hasher.combine(UInt64(step))
                hasher.combine(UInt64(station)); hasher.combine(take ? 1 : 0)
            case .moved(let user, let attempt, let step, let succeeded):
                hasher.combine(3); hasher.combine(UInt64(user)); hasher.combine(UInt64(attempt)); hasher.combine(UInt64(step))
                hasher.combine(succeeded.map { $0 ? 1 : 0 } ?? 2)
            case .ended(let user, let attempt): hasher.combine(4); hasher.combine(UInt64(user)); hasher.combine(UInt64(attempt))
            }
        }
    }

    public enum Timer: SimulationTraceable, Sendable {
        /// A worker's user takes its next step.
        case step(user: Int, attempt: Int, incarnation: UInt64)
        /// The coordinator's deadline for an attempt.
        case deadline(user: Int, attempt: Int)

        public var description: String {
            switch self {
            case .step(let user, let attempt, _): "user \(user) attempt \(attempt) steps"
            case .deadline(let user, let attempt): "deadline of user \(user) attempt \(attempt)"
            }
        }

        public func trace(into hasher: inout TraceHasher) {
            switch self {
            case .step(let user, let attempt, let incarnation):
                hasher.combine(5); hasher.combine(UInt64(user)); hasher.combine(UInt64(attempt)); hasher.combine(incarnation)
            case .deadline(let user, let attempt): hasher.combine(6); hasher.combine(UInt64(user)); hasher.combine(UInt64(attempt))
            }
        }
    }

    /// One attempt a worker runs: where its user is, and whether a move is out.
    struct Walk {
        var progress: UserProgress
        var waiting = false
    }

    public let options: Options
    public let nodes: [String]
    public var faultableNodes: [String] { Array(nodes.dropFirst()) }
    private let ledger: JobLedger
    private var bikes: [Int]
    private var attempts: [Int]
    private var accepted: [Int: Int] = [:]
    private var walks: [String: [Int: (attempt: Int, walk: Walk)]] = [:]
    private var incarnations: [String: UInt64] = [:]
    private var nextIncarnation: UInt64 = 1
    private var nextWorker = 0
    public private(set) var violation: String?
    /// Attempts started over the run (a user's first included).
    public private(set) var attemptsStarted = 0

    public init(options: Options) {
        self.options = options
        nodes = ["c"] + (1...max(1, options.workers)).map { "w\($0)" }
        ledger = JobLedger(users: options.users)
        bikes = Array(repeating: options.bikesPerStation, count: options.stations)
        attempts = Array(repeating: 0, count: options.users)
    }

    private var totalBikes: Int { options.stations * options.bikesPerStation }

    public mutating func start(_ node: String, in context: inout SimulationContext<Self>) {
        incarnations[node] = nextIncarnation
        nextIncarnation += 1
        if node == "c" {
            for user in 0..<options.users { startAttempt(of: user, avoiding: nil, in: &context) }
        } else {
            walks[node] = [:]
        }
    }

    public mutating func receive(_ message: Message, from sender: String, at node: String, in context: inout SimulationContext<Self>) {
        switch message {
        case .run(let user, let attempt, let progress):
            guard walks[node] != nil else { return }
            walks[node]?[user] = (attempt, Walk(progress: progress))
            step(user, at: node, in: &context)
        case .move(let user, let attempt, let step, let station, let take):
            guard node == "c", (0..<options.users).contains(user), (0..<options.stations).contains(station) else { return }
            var bikes = bikes
            let docks = options.docksPerStation
            let outcome: Bool?
            do {
                outcome = try ledger.perform(Move(user: user, attempt: attempt, step: step), station: "s\(station)", goal: nil) {
                    if take {
                        guard bikes[station] > 0 else { return false }
                        bikes[station] -= 1
                    } else {
                        guard bikes[station] < docks else { return false }
                        bikes[station] += 1
                    }
                    return true
                }
            } catch {
                outcome = nil
            }
            self.bikes = bikes
            context.send(.moved(user: user, attempt: attempt, step: step, succeeded: outcome), to: sender)
            checkConservation(at: context.now)
        case .moved(let user, let attempt, let step, let succeeded):
            guard var entry = walks[node]?[user], entry.attempt == attempt, entry.walk.waiting, step == entry.walk.progress.moves + 1 else { return }
            guard let succeeded else {
                walks[node]?[user] = nil
                return
            }
            entry.walk.waiting = false
            entry.walk.progress.record(succeeded: succeeded, at: "s\(stationOf(user, step: step))", goal: nil)
            walks[node]?[user] = entry
            if entry.walk.progress.paths >= options.paths || entry.walk.progress.moves >= options.maxMoves {
                walks[node]?[user] = nil
                context.send(.ended(user: user, attempt: attempt), to: "c")
            } else {
                context.schedule(.step(user: user, attempt: attempt, incarnation: incarnations[node] ?? 0), after: options.moveTime)
            }
        case .ended(let user, let attempt):
            guard node == "c", (0..<options.users).contains(user) else { return }
            if let progress = ledger.accept(user: user, attempt: attempt) {
                accepted[user, default: 0] += 1
                if violation == nil, accepted[user]! > 1 {
                    violation = "user \(user)'s result was accepted \(accepted[user]!) times"
                }
                if violation == nil, attempt != attempts[user] {
                    violation = "user \(user)'s result was accepted from attempt \(attempt), not its current \(attempts[user])"
                }
                if violation == nil, progress != ledger.progress(user: user) {
                    violation = "user \(user)'s accepted progress is not the ledger's"
                }
            }
        }
    }

    public mutating func fire(_ timer: Timer, at node: String, in context: inout SimulationContext<Self>) {
        switch timer {
        case .step(let user, let attempt, let incarnation):
            guard incarnations[node] == incarnation, walks[node]?[user]?.attempt == attempt else { return }
            step(user, at: node, in: &context)
        case .deadline(let user, let attempt):
            guard node == "c", accepted[user] == nil, attempts[user] == attempt else { return }
            startAttempt(of: user, avoiding: worker(of: attempt), in: &context)
        }
    }

    public mutating func crash(_ node: String, in context: inout SimulationContext<Self>) {
        walks[node] = nil
    }

    public mutating func healed(in context: inout SimulationContext<Self>) {}

    public func finalViolation(now: Double) -> String? {
        let missing = (0..<options.users).filter { accepted[$0] == nil }
        guard missing.isEmpty else { return "\(missing.count) of \(options.users) users have no result after the faults healed (first: user \(missing[0]))" }
        return nil
    }

    // MARK: - The shell

    /// The station of `user`'s step `step`: drawn from the user and the step alone, so an
    /// attempt that resumes walks on as the first would have.
    private func stationOf(_ user: Int, step: Int) -> Int {
        var z = UInt64(user) &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(step) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 30)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(options.stations))
    }

    /// The worker attempt `attempt` ran on (attempts go round the workers).
    private func worker(of attempt: Int) -> String { nodes[1 + (attempt - 1) % (nodes.count - 1)] }

    /// `c` fences off the user's older attempts and sends the next one to a worker.
    private mutating func startAttempt(of user: Int, avoiding: String?, in context: inout SimulationContext<Self>) {
        let attempt = attempts[user] + 1 + (worker(of: attempts[user] + 1) == avoiding ? 1 : 0)
        attempts[user] = attempt
        attemptsStarted += 1
        let progress = ledger.beginAttempt(user: user, attempt: attempt)
        context.send(.run(user: user, attempt: attempt, progress: progress), to: worker(of: attempt))
        context.schedule(.deadline(user: user, attempt: attempt), after: options.deadline)
    }

    /// A worker's user takes its next step: a take on foot, a leave when riding.
    private mutating func step(_ user: Int, at node: String, in context: inout SimulationContext<Self>) {
        guard var entry = walks[node]?[user], !entry.walk.waiting else { return }
        let step = entry.walk.progress.moves + 1
        entry.walk.waiting = true
        walks[node]?[user] = entry
        context.send(.move(user: user, attempt: entry.attempt, step: step, station: stationOf(user, step: step), take: !entry.walk.progress.hasBike), to: "c")
    }

    /// Bikes at the stations plus riders are the bikes the job started with, and no
    /// station holds fewer than none or more than its docks.
    private mutating func checkConservation(at now: Double) {
        guard violation == nil else { return }
        let riding = (0..<options.users).count { ledger.progress(user: $0).hasBike }
        let parked = bikes.reduce(0, +)
        if parked + riding != totalBikes {
            violation = "bikes not conserved: \(parked) at stations and \(riding) riding, of \(totalBikes)"
        } else if let station = bikes.indices.first(where: { bikes[$0] < 0 || bikes[$0] > options.docksPerStation }) {
            violation = "station s\(station) holds \(bikes[station]) bikes with \(options.docksPerStation) docks"
        }
    }
}
