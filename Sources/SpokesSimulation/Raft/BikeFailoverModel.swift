import SpokesBikes
import SpokesConsensus

/// A replicated bike job failing over in the simulator (issue 19): the job's Raft group of
/// replicas `n1`...`nN` (real `RaftReplica`s in `RaftShell`s over `SimulatedRaftDisk`s,
/// whose crashes may tear the record being flushed), each applying committed entries to
/// the real `BikeJobMachine`. The replica that leads and has applied its whole log
/// coordinates the job as `BikeJob.run` does under `ReplicatedBikeJobs`: it builds a
/// recording `JobLedger` from its machine's committed book (a take-over, or the first
/// run), runs the users on its rounds (each begun as an attempt numbered above every
/// attempt in the book, moving step by step, a take on foot and a leave when riding,
/// sometimes retried as a new attempt that fences off the old one, and counted with
/// `accept` and `end` once its paths are ridden or its moves used up), and commits the
/// ledger's events in the order it made them, one batch in flight at a time. A
/// coordinator that stops leading drops its ledger and the changes it had not committed.
/// Seeded faults hit the replicas: the leader crashes mid-move (with events made and not
/// committed), partitions cut the group during an election, a restart recovers a log
/// whose last record the crash tore; pauses and loss too (`faultKinds`), and any of the
/// kernel's other faults a run asks for.
///
/// Invariants, checked after every event (besides `RaftInvariants`):
/// 1. **Bikes are conserved**: every coordinator's book after each of its events, and
///    every replica's book after each entry or snapshot it applies, has the job's bikes in
///    play (`bikesInPlay`: at the stations or ridden).
/// 2. **Committed prefix**: a replica's book after committed entry *i* is the book the
///    coordinator that proposed *i* had after its last event in *i*, and that batch's
///    events were made from the book committed before *i*; the machine refuses none of
///    them. Replicas never hold a state no coordinator had, and every replica holds the
///    same state at each index (snapshots included).
/// 3. **A user's result counts once**: once a committed book has a user's result, every
///    later committed book has the same result and progress, and the committed log counts
///    each user once, across every leader; a fenced-off attempt's move is refused and a
///    repeated move changes nothing.
/// 4. **Term fence**: committed event batches never go back in term, and none from a
///    coordinator commits after the coordinator of a later term began (at the index it
///    took over from).
/// 5. **Liveness**: within `livenessBound` seconds after the faults heal the job's finish
///    is committed, and at the end every replica has finished it with every user's result
///    counted, bikes conserved and the same book.
public struct BikeFailoverModel: RaftShellModel {
    public struct Options: Sendable, Hashable {
        public var replicas: Int
        public var users: Int
        public var paths: Int
        public var stations: Int
        public var bikesPerStation: Int
        public var emptySlotsPerStation: Int
        /// A user gives up after this many moves (its result counts, as `gaveUp`).
        public var maxMoves: Int
        /// Seconds between a coordinator's rounds.
        public var round: ClosedRange<Double>
        /// User actions (an attempt begun, a move, a result counted) per round.
        public var actionsPerRound: ClosedRange<Int>
        /// Per action, the chance that the user's worker fails and the user runs again as
        /// a new attempt.
        public var retryChance: Double
        /// Each replica compacts its log once this many entries were applied since its
        /// last snapshot (drawn per replica from the range), nil: never.
        public var compactEvery: ClosedRange<Int>?
        /// How long a flush takes: long enough that a crash often finds one in flight.
        public var diskLatency: ClosedRange<Double>
        /// After the last fault ends, the job's finish must be committed within this many seconds.
        public var livenessBound: Double
        /// Break the take-over on purpose: a new coordinator resumes from the latest
        /// coordinator's in-memory book (changes it never committed included) instead of
        /// its committed book. Exists to show that the invariants catch it.
        public var resumeFromUncommitted = false

        /// Defaults: the job's users need about 10 virtual seconds, so faults in the first
        /// 10 seconds meet it running.
        public init(replicas: Int = 3, users: Int = 12, paths: Int = 4, stations: Int = 4, bikesPerStation: Int = 2, emptySlotsPerStation: Int = 2,
                    maxMoves: Int = 30, round: ClosedRange<Double> = 0.04...0.12, actionsPerRound: ClosedRange<Int> = 1...2, retryChance: Double = 0.03,
                    compactEvery: ClosedRange<Int>? = 8...30, diskLatency: ClosedRange<Double> = 0.005...0.03, livenessBound: Double = 20) {
            self.replicas = replicas
            self.users = users
            self.paths = paths
            self.stations = stations
            self.bikesPerStation = bikesPerStation
            self.emptySlotsPerStation = emptySlotsPerStation
            self.maxMoves = maxMoves
            self.round = round
            self.actionsPerRound = actionsPerRound
            self.retryChance = retryChance
            self.compactEvery = compactEvery
            self.diskLatency = diskLatency
            self.livenessBound = livenessBound
        }
    }

    public enum Message: SimulationTraceable, Sendable {
        case raft(RaftMessage)

        public var description: String {
            switch self {
            case .raft(let message): message.description
            }
        }

        public func trace(into hasher: inout TraceHasher) {
            switch self {
            case .raft(let message): message.trace(into: &hasher)
            }
        }
    }

    public enum Timer: SimulationTraceable, Sendable {
        case tick(generation: Int)
        case flushed(batch: Int)
        /// A leader's next round of coordination.
        case round(generation: Int)
        /// The coordinator's batch committed: it hands on the next.
        case drain

        public var description: String {
            switch self {
            case .tick(let generation): "tick #\(generation)"
            case .flushed(let batch): "flush done through write \(batch)"
            case .round(let generation): "round #\(generation)"
            case .drain: "commit the next batch"
            }
        }

        public func trace(into hasher: inout TraceHasher) {
            switch self {
            case .tick(let generation): hasher.combine(201); hasher.combine(generation)
            case .flushed(let batch): hasher.combine(202); hasher.combine(batch)
            case .round(let generation): hasher.combine(301); hasher.combine(generation)
            case .drain: hasher.combine(302)
            }
        }
    }

    /// What the model proposed at a log position.
    enum Proposal {
        case start
        /// The proposing coordinator's events `before + 1 ... before + count`, which count
        /// the results of `accepted`.
        case record(before: Int, count: Int, accepted: [Int])
        /// A leader's take-over: the job's epoch becomes its term.
        case takeOver
        case finish
    }

    /// The replica that coordinates the job, while it leads `term`.
    struct Coordinator {
        let term: Int
        /// The epoch its batches carry: 0 for the job's first coordinator, one more per take-over.
        let epoch: Int
        let ledger: JobLedger
        /// The attempt each user runs as under this coordinator.
        var attempts: [Int: Int] = [:]
        /// The batch proposed and not yet applied here.
        var inFlight: RaftLogPosition?
        /// Events of this coordinator applied here.
        var committedEvents = 0
        var finishProposed = false
    }

    /// A replica's application: the job's machine, and the coordinator when it is one.
    struct Application {
        var machine = BikeJobMachine()
        var coordinator: Coordinator?
        /// The term in which it proposed the job (as its submitter's node does once).
        var jobProposedIn: Int?
        /// The term in which this replica proposed its take-over, and the epoch it proposed.
        var takeOverProposedIn: Int?
        var takeOverEpoch: Int?
        var leadingTerm: Int?
        var roundGeneration = 0
    }

    /// A replica's machine after a committed entry.
    struct Committed: Equatable {
        var book: BikeJobBook?
        var finished: Bool
    }

    /// The faults a run of this model draws unless told otherwise: what failover is about
    /// (crashes, partitions, pauses and loss).
    public static let faultKinds: [SimulationFault.Kind] = [.crash, .partition, .pause, .loss]
    /// Faults per run: enough that a crash often finds a flush in flight (a torn record).
    public static let faultCount = 2...8

    public let options: Options
    public let nodes: [String]
    public var faultRoles: [String] { ["@leader"] }
    public let job: BikeJob
    let group: RaftGroup
    var shells: [RaftShell]
    var applications: [Application]
    let shellNumbers: [String: Int]
    public internal(set) var invariants: RaftInvariants
    /// The replicas' configuration and the coordinators' events per commit, drawn at the first start.
    private var configuration: RaftConfiguration?
    private var eventsPerCommit = 1
    private let totalBikes: Int

    private var proposals: [RaftLogPosition: Proposal] = [:]
    /// Each coordinator's book (by its term) where it began and after each of its events.
    private var histories: [Int: [BikeJobBook]] = [:]
    /// The replicas' state after each committed index (0: before the first).
    private var committedStates = [Committed(book: nil, finished: false)]
    /// Where each coordinator began: its term and the index it took over from.
    private var takeOvers: [(term: Int, index: Int)] = []
    private var lastBatchTerm = 0
    /// For each user whose result committed: the term of the batch that counted it.
    private var countedIn: [Int: Int] = [:]
    /// The latest coordinator's ledger, for the broken take-over.
    private var latestLedger: (term: Int, ledger: JobLedger)?
    private var failure: String?

    public private(set) var healedAt: Double?
    /// When the job's finish was first committed.
    public private(set) var finishedAt: Double?
    /// Crashes of a coordinator that had made events it had not committed.
    public private(set) var crashesMidMove = 0
    /// Coordinators that stopped leading (cut off, paused or outvoted) with events not committed.
    public private(set) var deposedMidMove = 0
    /// Crashes that tore the record being flushed (recovery dropped it on restart).
    public private(set) var tornRecords = 0
    /// When replicas became candidates (an election began).
    public private(set) var campaigns: [Double] = []
    /// Coordinators that took the job over from an earlier one.
    public var takeOverCount: Int { max(0, takeOvers.count - 1) }

    public init(options: Options = Options()) {
        self.options = options
        nodes = (1...max(1, options.replicas)).map { "n\($0)" }
        // Names are generated: never empty, never repeated.
        group = try! RaftGroup(replicas: nodes, firstLeader: "n1")
        invariants = RaftInvariants(group: group)
        shells = nodes.map { _ in RaftShell() }
        applications = nodes.map { _ in Application() }
        shellNumbers = Dictionary(uniqueKeysWithValues: nodes.enumerated().map { ($0.element, $0.offset) })
        let network = Network.synthetic(stations: options.stations, bikes: options.bikesPerStation, emptySlots: options.emptySlotsPerStation)
        job = BikeJob(id: "job-failover", network: network, options: SpokesBikes.SimulationOptions(users: options.users, paths: options.paths, maxMovesPerUser: options.maxMoves))
        totalBikes = options.stations * options.bikesPerStation
    }

    public var violation: String? { invariants.violation ?? failure }

    private mutating func fail(_ message: String) {
        if failure == nil { failure = message }
    }

    /// "@leader": the running replica that leads the highest term.
    public func node(playing role: String) -> String? {
        guard role == "@leader" else { return nil }
        return nodes
            .compactMap { name in shells[shellNumbers[name]!].replica.flatMap { $0.role == .leader ? (name, $0.term) : nil } }
            .max { $0.1 < $1.1 }?.0
    }

    /// Partitions of `faults` during which an election began.
    public func partitionsDuringElections(_ faults: [SimulationFault]) -> Int {
        faults.count { fault in
            guard case .partition = fault.effect else { return false }
            return campaigns.contains { fault.start <= $0 && $0 <= fault.end }
        }
    }

    /// The failover scenarios this run (with `faults`) went through, by name: `leader
    /// crash mid-move`, `leader deposed mid-move`, `partition during an election`, `restart
    /// with a torn log record`, `take-over`.
    public func scenarios(faults: [SimulationFault]) -> [String] {
        var seen: [String] = []
        if crashesMidMove > 0 { seen.append("leader crash mid-move") }
        if deposedMidMove > 0 { seen.append("leader deposed mid-move") }
        if partitionsDuringElections(faults) > 0 { seen.append("partition during an election") }
        if tornRecords > 0 { seen.append("restart with a torn log record") }
        if takeOverCount > 0 { seen.append("take-over") }
        return seen
    }

    // MARK: - Events

    public mutating func start(_ node: String, in context: inout SimulationContext<Self>) {
        guard let number = shellNumbers[node] else { return }
        if configuration == nil {
            var drawn = RaftConfiguration()
            drawn.maxEntriesPerMessage = context.random.element(of: [1, 2, 8, 512])
            drawn.maxMessagesInFlight = context.random.element(of: [1, 2, 8])
            configuration = drawn
            eventsPerCommit = context.random.element(of: [1, 2, 4, 4000])
        }
        applications[number] = Application()
        startReplica(node, configuration: configuration!, compactEvery: options.compactEvery, in: &context)
    }

    public mutating func receive(_ message: Message, from sender: String, at node: String, in context: inout SimulationContext<Self>) {
        switch message {
        case .raft(let raft): receiveRaft(raft, from: sender, at: node, in: &context)
        }
    }

    public mutating func fire(_ timer: Timer, at node: String, in context: inout SimulationContext<Self>) {
        switch timer {
        case .tick(let generation):
            tickReplica(node, generation: generation, in: &context)
        case .flushed(let batch):
            flushed(node, batch: batch, in: &context)
        case .round(let generation):
            guard let number = shellNumbers[node], applications[number].roundGeneration == generation, shells[number].replica?.role == .leader,
                  !applications[number].machine.finished else { return }
            coordinate(node, number: number, in: &context)
            context.schedule(.round(generation: generation), after: context.random.uniform(in: options.round))
        case .drain:
            guard let number = shellNumbers[node] else { return }
            commitNext(node, number: number, in: &context)
        }
    }

    public mutating func crash(_ node: String, in context: inout SimulationContext<Self>) {
        guard let number = shellNumbers[node] else { return }
        if let coordinator = applications[number].coordinator, coordinator.ledger.eventsMade > coordinator.committedEvents {
            crashesMidMove += 1
            context.note("\(node) crashed mid-move: \(coordinator.ledger.eventsMade - coordinator.committedEvents) events not committed")
        }
        if crashReplica(node, in: &context)?.torn == true { tornRecords += 1 }
        applications[number] = Application()
    }

    public mutating func healed(in context: inout SimulationContext<Self>) {
        healedAt = context.now
    }

    public func finalViolation(now: Double) -> String? {
        guard let healedAt else { return "the faults never healed" }
        let bound = healedAt + options.livenessBound
        guard let finishedAt, finishedAt <= bound else {
            let users = committedStates.last?.book.map { "\($0.doneUsers.count) of \(options.users)" } ?? "no"
            return "liveness: the job's finish was not committed by \(fixed(bound, 3))s (\(fixed(options.livenessBound, 0))s after the faults healed); \(users) users done in the committed book"
        }
        for (number, application) in applications.enumerated() {
            let name = nodes[number]
            guard application.machine.finished, let book = application.machine.book else { return "liveness: \(name) has not applied the job's finish" }
            if let user = book.entries.indices.first(where: { book.entries[$0].accepted == nil }) { return "liveness: \(name)'s finished book has no result for user \(user)" }
            if book.bikesInPlay != totalBikes { return "liveness: \(name)'s finished book has \(book.bikesInPlay) bikes in play, of \(totalBikes)" }
            if book != applications[0].machine.book { return "liveness: \(name)'s finished book differs from \(nodes[0])'s" }
        }
        return nil
    }

    // MARK: - The coordinator

    /// A round of the leader at `node`: it takes the job over once it has applied its
    /// whole log (or proposes the job, when the group has none yet), runs some of its
    /// users' actions and commits what they changed.
    private mutating func coordinate(_ node: String, number: Int, in context: inout SimulationContext<Self>) {
        guard let replica = shells[number].replica else { return }
        if applications[number].coordinator == nil {
            let last = replica.lastLogPosition
            guard replica.appliedIndex == last.index, last.term == replica.term, !applications[number].machine.finished else { return }
            guard let book = applications[number].machine.book else {
                guard applications[number].jobProposedIn != replica.term else { return }
                applications[number].jobProposedIn = replica.term
                if let (_, actions) = propose(BikeJobMachine.start(job), as: .start, at: number, in: &context) { runReplica(node, actions, in: &context) }
                return
            }
            // The job's first coordinator runs in epoch 0; any other commits the next epoch
            // first, as `ReplicatedBikeJobs` does, and starts from the book then.
            let machine = applications[number].machine
            let epoch: Int
            if applications[number].jobProposedIn == replica.term, machine.epoch == 0 {
                epoch = 0
            } else if applications[number].takeOverProposedIn == replica.term, applications[number].takeOverEpoch == machine.epoch {
                epoch = machine.epoch
            } else {
                guard applications[number].takeOverProposedIn != replica.term else { return }
                applications[number].takeOverProposedIn = replica.term
                applications[number].takeOverEpoch = machine.epoch + 1
                if let (_, actions) = propose(BikeJobMachine.takeOver(epoch: machine.epoch + 1), as: .takeOver, at: number, in: &context) {
                    runReplica(node, actions, in: &context)
                }
                return
            }
            var base = book
            if options.resumeFromUncommitted, let latest = latestLedger, latest.term < replica.term { base = latest.ledger.book }
            let ledger = JobLedger(book: base, recording: true)
            applications[number].coordinator = Coordinator(term: replica.term, epoch: epoch, ledger: ledger)
            histories[replica.term] = [base]
            takeOvers.append((replica.term, replica.appliedIndex))
            latestLedger = (replica.term, ledger)
            context.note("\(node) coordinates the job in term \(replica.term) from index \(replica.appliedIndex), \(book.doneUsers.count) users done")
        }
        for _ in 0..<context.random.integer(in: options.actionsPerRound) where !act(node, number: number, in: &context) { break }
        commitNext(node, number: number, in: &context)
    }

    /// One action of a user not done: its attempt begins, it moves, a retry fences its
    /// attempt off, or its result counts. False when every user is done.
    private mutating func act(_ node: String, number: Int, in context: inout SimulationContext<Self>) -> Bool {
        guard var coordinator = applications[number].coordinator else { return false }
        defer { applications[number].coordinator = coordinator }
        let ledger = coordinator.ledger
        let book = ledger.book
        let done = book.doneUsers
        let running = book.entries.indices.filter { !done.contains($0) }
        guard !running.isEmpty else { return false }
        let user = context.random.element(of: running)
        let progress = book.entries[user].progress
        guard let attempt = coordinator.attempts[user] else {
            let attempt = book.entries[user].attempt + 1
            _ = ledger.beginAttempt(user: user, attempt: attempt)
            coordinator.attempts[user] = attempt
            recorded(coordinator)
            return true
        }
        if progress.isFinished(paths: options.paths) || progress.moves >= options.maxMoves {
            let ending: SpokesBikes.SimulationResult.Ending = progress.isFinished(paths: options.paths) ? .finishedPaths : .gaveUp
            if ledger.accept(user: user, attempt: attempt, ending: ending) == nil {
                fail("counted once: coordinator of term \(coordinator.term) could not count user \(user)'s result from its current attempt \(attempt)")
            }
            recorded(coordinator)
            ledger.end(user: user, BikeJobBook.UserEnd(ending: ending, node: node, attempts: attempt, reasons: []))
            recorded(coordinator)
        } else if context.random.chance(options.retryChance) {
            coordinator.attempts[user] = attempt + 1
            _ = ledger.beginAttempt(user: user, attempt: attempt + 1)
            recorded(coordinator)
            let stale = Move(user: user, attempt: attempt, step: progress.moves + 1)
            if (try? ledger.move(stale, station: 0, take: !progress.hasBike)) != nil {
                fail("counted once: user \(user)'s fenced-off attempt \(attempt) moved at term \(coordinator.term)")
            }
            if ledger.accept(user: user, attempt: attempt) != nil {
                fail("counted once: user \(user)'s result was counted from fenced-off attempt \(attempt) at term \(coordinator.term)")
            }
        } else {
            let move = Move(user: user, attempt: attempt, step: progress.moves + 1)
            let station = context.random.index(below: options.stations)
            do {
                let outcome = try ledger.move(move, station: station, take: !progress.hasBike)
                recorded(coordinator)
                if context.random.chance(0.1) {
                    let made = ledger.eventsMade
                    let again = try ledger.move(move, station: station, take: !progress.hasBike)
                    if again != outcome || ledger.eventsMade != made {
                        fail("counted once: user \(user)'s repeated step \(move.step) changed the book at term \(coordinator.term)")
                    }
                }
            } catch {
                fail("coordinator of term \(coordinator.term): user \(user)'s step \(move.step) of its current attempt \(attempt) was refused: \(error)")
            }
        }
        return true
    }

    /// Keeps the coordinator's book after its latest event, and checks it conserves bikes.
    private mutating func recorded(_ coordinator: Coordinator) {
        guard let count = histories[coordinator.term]?.count, coordinator.ledger.eventsMade >= count else { return }
        let book = coordinator.ledger.book
        histories[coordinator.term]!.append(book)
        if book.bikesInPlay != totalBikes {
            fail("bikes conserved: the coordinator of term \(coordinator.term) has \(book.bikesInPlay) bikes in play after its event \(count), of \(totalBikes)")
        }
    }

    /// With no batch in flight, proposes the ledger's next events in order; with none left
    /// and every user done and committed, the job's finish.
    private mutating func commitNext(_ node: String, number: Int, in context: inout SimulationContext<Self>) {
        guard let coordinator = applications[number].coordinator, coordinator.inFlight == nil else { return }
        let ledger = coordinator.ledger
        let (events, before) = ledger.takeEvents(limit: eventsPerCommit)
        let proposal: Proposal
        let command: String
        if events.isEmpty {
            let book = ledger.book
            guard !coordinator.finishProposed, book.doneUsers.count == options.users, applications[number].machine.book == book else { return }
            applications[number].coordinator?.finishProposed = true
            (proposal, command) = (.finish, BikeJobMachine.finish)
        } else {
            let accepted = events.compactMap { event -> Int? in
                if case .accepted(let user, _, _) = event { return user }
                return nil
            }
            (proposal, command) = (.record(before: before, count: events.count, accepted: accepted), BikeJobMachine.record(events, epoch: coordinator.epoch))
        }
        guard let (position, actions) = propose(command, as: proposal, at: number, in: &context) else { return }
        if let position {
            applications[number].coordinator?.inFlight = position
        } else {
            drop(node, number: number, in: &context)
        }
        runReplica(node, actions, in: &context)
    }

    /// Proposes `command` at replica `number`: where it went (nil: not the leader) and the
    /// actions to carry out.
    private mutating func propose(_ command: String, as proposal: Proposal, at number: Int, in context: inout SimulationContext<Self>) -> (RaftLogPosition?, [RaftDriver.Effect])? {
        guard let (result, actions) = shells[number].driver?.propose([command], now: context.now) else { return nil }
        guard case .accepted(let term, let indices) = result else { return (nil, actions) }
        let position = RaftLogPosition(index: indices.lowerBound, term: term)
        proposals[position] = proposal
        return (position, actions)
    }

    /// The coordinator at `number` stopped leading: its changes not committed are lost.
    private mutating func drop(_ node: String, number: Int, in context: inout SimulationContext<Self>) {
        guard let coordinator = applications[number].coordinator else { return }
        applications[number].coordinator = nil
        if coordinator.ledger.eventsMade > coordinator.committedEvents { deposedMidMove += 1 }
        context.note("\(node) stops coordinating term \(coordinator.term): \(coordinator.ledger.eventsMade - coordinator.committedEvents) events not committed are lost")
    }

    // MARK: - The shell's hooks

    var diskLatency: ClosedRange<Double> { options.diskLatency }
    var sendsBeforePersisting: Bool { false }
    static func raftMessage(_ message: RaftMessage) -> Message { .raft(message) }
    static func tickTimer(generation: Int) -> Timer { .tick(generation: generation) }
    static func flushTimer(batch: Int) -> Timer { .flushed(batch: batch) }

    mutating func applyEntries(_ entries: [RaftEntry], at node: String, number: Int, in context: inout SimulationContext<Self>) {
        for entry in entries {
            if let command = entry.command { _ = applications[number].machine.apply(command) }
            check(entry, at: node, number: number, now: context.now)
            guard let inFlight = applications[number].coordinator?.inFlight, inFlight.index == entry.index else { continue }
            if inFlight.term == entry.term, case .record(let before, let count, _)? = proposals[inFlight] {
                applications[number].coordinator?.committedEvents = before + count
            }
            applications[number].coordinator?.inFlight = nil
            context.schedule(.drain, after: 0)
        }
    }

    mutating func restoreSnapshot(_ snapshot: RaftSnapshot, at node: String, number: Int, in context: inout SimulationContext<Self>) {
        do {
            try applications[number].machine.restore(snapshot.data)
        } catch {
            return fail("\(node) cannot restore its snapshot through \(snapshot.index): \(error)")
        }
        let machine = applications[number].machine
        if let book = machine.book, book.bikesInPlay != totalBikes {
            fail("bikes conserved: \(node)'s book from its snapshot through \(snapshot.index) has \(book.bikesInPlay) bikes in play, of \(totalBikes)")
        }
        if snapshot.index < committedStates.count, committedStates[snapshot.index] != Committed(book: machine.book, finished: machine.finished) {
            invariants.snapshotDiffers(node, snapshot)
        }
    }

    func snapshotData(of number: Int) -> String { applications[number].machine.snapshot() }

    mutating func statusChanged(_ status: RaftStatus, at node: String, number: Int, in context: inout SimulationContext<Self>) {
        if status.role == .candidate { campaigns.append(context.now) }
        if let coordinator = applications[number].coordinator, status.role != .leader || status.term != coordinator.term {
            drop(node, number: number, in: &context)
        }
        if status.role == .leader, applications[number].leadingTerm != status.term {
            applications[number].leadingTerm = status.term
            applications[number].roundGeneration += 1
            context.schedule(.round(generation: applications[number].roundGeneration), after: context.random.uniform(in: options.round))
        }
    }

    // MARK: - Invariants

    /// Invariants 1-4 after replica `number` applied `entry`.
    private mutating func check(_ entry: RaftEntry, at node: String, number: Int, now: Double) {
        let machine = applications[number].machine
        let state = Committed(book: machine.book, finished: machine.finished)
        if let book = state.book, book.bikesInPlay != totalBikes {
            fail("bikes conserved: \(node)'s book has \(book.bikesInPlay) bikes in play after index \(entry.index), of \(totalBikes)")
        }
        if machine.refusedEvents > 0 {
            fail("committed prefix: \(node)'s book refused \(machine.refusedEvents) committed events (they were made from a state it does not hold)")
        }
        guard entry.index == committedStates.count else {
            if entry.index < committedStates.count, committedStates[entry.index] != state {
                fail("committed prefix: \(node)'s state after index \(entry.index) differs from the state committed there")
            }
            return
        }
        let previous = committedStates[entry.index - 1]
        committedStates.append(state)
        switch proposals[RaftLogPosition(index: entry.index, term: entry.term)] {
        case .record(let before, let count, let accepted)?:
            let history = histories[entry.term] ?? []
            if before + count >= history.count {
                fail("committed prefix: index \(entry.index) holds events \(before + 1)...\(before + count) of term \(entry.term), which its coordinator never made")
            } else if previous.book != history[before] {
                fail("committed prefix: the coordinator of term \(entry.term) made events \(before + 1)...\(before + count) (committed at \(entry.index)) from a book that is not the one committed before them")
            } else if state.book != history[before + count] {
                fail("committed prefix: after index \(entry.index), \(node)'s book is not the book the coordinator of term \(entry.term) had after its event \(before + count)")
            }
            if entry.term < lastBatchTerm {
                fail("term fence: a batch of term \(entry.term) committed at \(entry.index) after a batch of term \(lastBatchTerm)")
            }
            lastBatchTerm = max(lastBatchTerm, entry.term)
            if let newer = takeOvers.first(where: { $0.term > entry.term && $0.index < entry.index }) {
                fail("term fence: the coordinator of term \(entry.term) committed at \(entry.index) after the coordinator of term \(newer.term) took over from \(newer.index)")
            }
            for user in accepted {
                if let earlier = countedIn[user] {
                    fail("counted once: user \(user)'s result was committed in term \(earlier) and again in term \(entry.term)")
                }
                countedIn[user] = entry.term
            }
        case .start?:
            if state.book != (previous.book ?? job.startingBook) { fail("committed prefix: the job's start at \(entry.index) changed a running book") }
        case .takeOver?:
            if state.book != previous.book { fail("committed prefix: a take-over at \(entry.index) changed the book") }
        case .finish?:
            if state.book != previous.book { fail("committed prefix: the job's finish at \(entry.index) changed the book") }
            if finishedAt == nil { finishedAt = now }
        case nil:
            if state.book != previous.book { fail("committed prefix: index \(entry.index) (no command of a coordinator) changed the book") }
        }
        if let earlier = previous.book, let book = state.book {
            for user in earlier.entries.indices where earlier.entries[user].accepted != nil {
                if book.entries[user].accepted != earlier.entries[user].accepted || book.entries[user].progress != earlier.entries[user].progress {
                    fail("counted once: user \(user)'s counted result changed at committed index \(entry.index)")
                }
            }
        }
    }
}
