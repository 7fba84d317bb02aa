import SpokesBikes
import SpokesConsensus

/// A sharded bike job failing over in the simulator (issue 19, "Sharded stations"): the
/// job's stations split over `K` shards (station `i` is shard `i % K`'s), each shard its
/// own Raft group of real `RaftReplica`s (over `SimulatedRaftDisk`s whose crashes may tear
/// the record being flushed) applying committed entries to the real `StationShardMachine`,
/// and the job's own group applying the real `BikeJobMachine`. Nodes `n1`...`nN`; every
/// group has `min(3, N)` replicas (shard `k`'s are the `k`-th node and those after it, its
/// first host first; the job's are the first nodes).
///
/// - **Hosts** answer moves from a real `StationShardLedger` and commit its events in
///   batches of `StationShardMachine.record(events, seqs:outcomes:epoch:)` proposed to the
///   shard's group (through its leader, as `RaftHost` forwards), as
///   `takeCommittable(limit:known:)` (``ShardCommitOrder``) allows: they learn what the
///   other shards committed from those shards' hosts (`awaitCommitted`), stop when a
///   commit fails or a dependency is not committed within the patience, and tell the
///   coordinator. A host of a later epoch commits `takeOver(epoch:)` to its shard's group
///   first and starts from the book committed then.
/// - **The coordinator** is the job group's leader once it has applied its whole log, as
///   in `BikeFailoverModel`. It starts the job (opens the shards in epoch 0, then commits
///   the job with their layout) or takes it over (commits the job's next epoch first);
///   opens every shard on a host chosen as `ReplicatedBikeJobs.hosts(for:alive:job:)` does
///   (its first host while alive, else the least loaded alive replica); builds the job's
///   book from the committed job book and every shard's book (`BikeJobBook.adopt`) and
///   runs every user not done from that cut, with an attempt above every attempt seen.
///   Users are simulated inline: one move at a time, each a message to its station's
///   host naming the user's previous move (`after`), now and then a retry whose new
///   attempt is fenced on every shard and resumes from the furthest move there; a result
///   is counted (`accept`, `end`, committed to the job group) once the user's last move is
///   committed (the real run waits for every shard's moves, `flush`, which implies it).
///   It loses the epoch when a host is dead (not heard from for `deadAfter`), a host stops,
///   or an open, fence or close does not answer within the patience, and then starts the
///   next one once every shard has an alive replica. At the end it closes the shards one after the other (each host commits its
///   shard's finish once drained) and commits the job's finish.
/// - **The rest of the node**: every node tells the others it runs every 0.2 s (the
///   membership's heartbeats, which the coordinator judges hosts by), and removes its
///   replica of a group 10 s after the group finished (`JobGroups.watch`), or when it has
///   had no alive leader for 5 s and a replica it reaches removed it.
///
/// Seeded faults (`faultKinds`) hit the nodes: a shard host crashing mid-move (losing its
/// uncommitted tail; its disks may tear the last record), partitions during elections, a
/// paused or cut-off host whose late batch reaches its group after a take-over, the
/// coordinator lost, and loss.
///
/// Invariants, checked after every event (besides each group's `RaftInvariants`):
/// 1. **Bikes conserved in the committed cut**: the job's starting book adopting every
///    shard's newest committed book (and the cut a take-over starts from) has the job's
///    bikes in play: at stations or ridden.
/// 2. **Per-user prefix**: each user's committed moves, over all shards, form one chain
///    (each committed move starts from where the user's last committed move left it, and
///    the move it names as `after` is that committed move), the cut's progress is where
///    that chain ends, every progress a coordinator resumes a user from is one the user
///    really had after some number of its own moves, and a counted result's moves are
///    committed and never change.
/// 3. **Epoch fence**: no replica's shard book changes but by a batch of the shard's
///    current epoch (after `takeOver(e)` no batch of an epoch below `e` applies), and no
///    committed batch has an event its book refuses.
/// 4. **Replicas agree**: per group, every replica holds the same state after each index
///    (snapshots included); each user's result is committed once.
/// 5. **Liveness**: within `livenessBound` seconds after the faults heal the job's finish
///    is committed, with every user's result counted and its paths ridden (or its moves
///    used up) in the committed cut, bikes conserved, and every replica agreeing.
public struct ShardedBikeModel: SimulationModel {
    /// The cluster, the job and the timing of a run.
    public struct Options: Sendable, Hashable {
        public var nodes: Int
        /// Station shards (each its own Raft group): `min(3, nodes)` by default.
        public var shards: Int
        public var users: Int
        public var paths: Int
        public var stations: Int
        public var bikesPerStation: Int
        public var emptySlotsPerStation: Int
        /// A user gives up after this many moves (its result counts, as `gaveUp`).
        public var maxMoves: Int
        /// Seconds between the coordinator's rounds.
        public var round: ClosedRange<Double>
        /// User actions per round.
        public var actionsPerRound: ClosedRange<Int>
        /// Per action, the chance that the user's worker fails and it runs again as a new,
        /// fenced attempt.
        public var retryChance: Double
        /// Each replica compacts its log once this many entries were applied since its last
        /// snapshot (drawn per replica), nil: never.
        public var compactEvery: ClosedRange<Int>?
        /// How long a flush takes.
        public var diskLatency: ClosedRange<Double>
        /// A node not heard from for this long is no longer an alive member (membership's
        /// `suspect_after`): hosts are chosen among the alive.
        public var suspectAfter: Double
        /// A node not heard from for this long is dead (`dead_after`): its connection is
        /// closed, calls to it fail, and an epoch hosted on it is lost.
        public var deadAfter: Double
        /// A host proposes a batch its group did not commit again, every 0.1 s, for this
        /// many seconds (`JobGroups.proposeWhileElecting`) before it stops.
        public var commitPatience: Double
        /// A move not answered within this many seconds fails its attempt (the user is retried).
        public var moveTimeout: Double
        /// Seconds an open, fence or close may take, and a host waits for a dependency,
        /// before the epoch is lost (`ShardedRun.patience`, `BikeShards.dependencyPatience`).
        public var patience: Double
        /// A proposal not applied within this many seconds fails (`RaftHost`'s timeout).
        public var proposalTimeout: Double
        /// After the last fault ends, the job's finish must be committed within this many seconds.
        public var livenessBound: Double
        /// A replica removes a finished group this many seconds after it saw it finished (its
        /// leader 2 s later), as `JobGroups.watch` does (`finishedGroupLingers`); nil: never.
        public var finishedGroupLingers: Double?
        /// Break the commit rule on purpose: hosts commit every move they made at once,
        /// without waiting for the move it follows. Exists to show that the invariants catch it.
        public var commitIgnoringDependencies = false

        /// Defaults: the job's users need several virtual seconds, so faults in the first 10
        /// seconds meet it running.
        public init(nodes: Int = 3, users: Int = 6, paths: Int = 4, stations: Int = 7, bikesPerStation: Int = 2, emptySlotsPerStation: Int = 2,
                    maxMoves: Int = 30, round: ClosedRange<Double> = 0.06...0.16, actionsPerRound: ClosedRange<Int> = 1...2, retryChance: Double = 0.03,
                    compactEvery: ClosedRange<Int>? = 8...30, diskLatency: ClosedRange<Double> = 0.005...0.03, livenessBound: Double = 10) {
            self.nodes = max(1, nodes)
            shards = min(3, max(1, nodes))
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
            suspectAfter = 0.6
            deadAfter = 1.2
            commitPatience = 5
            moveTimeout = 1
            patience = 3
            proposalTimeout = 2
            self.livenessBound = livenessBound
            finishedGroupLingers = 10
        }
    }

    /// A user's last move at a shard and where it was made, as a fence answers it.
    public struct LastMove: Sendable, Hashable {
        public var mark: StationShardBook.Mark
        public var position: StationShardBook.Position
    }

    /// What nodes send each other: the groups' Raft messages (group `K` is the job's, the
    /// others are the shards'), and what the hosts, the coordinator and its users say.
    public enum Message: SimulationTraceable, Sendable {
        case raft(group: Int, RaftMessage)
        /// The membership's heartbeat: the sender runs.
        case alive
        /// A proposal for the group's leader (`RaftHost` forwarding); answered by `forwarded`.
        case forward(group: Int, command: String, ticket: Int)
        /// The result of applying a forwarded proposal, nil when it was not committed.
        case forwarded(ticket: Int, result: String?)
        /// The coordinator asks a node to host a shard in an epoch.
        case open(shard: Int, epoch: Int, hosts: [String])
        /// The shard's committed book it starts from, nil when it cannot.
        case opened(shard: Int, epoch: Int, book: StationShardBook?)
        case move(shard: Int, epoch: Int, StationShardBook.ShardMove, ticket: Int)
        /// A move's outcome and position, nil when it was refused.
        case answer(ticket: Int, outcome: Bool?, position: StationShardBook.Position?)
        case fence(shard: Int, epoch: Int, user: Int, attempt: Int)
        /// `hosted` false: the shard is not hosted here in that epoch.
        case fenced(shard: Int, epoch: Int, user: Int, attempt: Int, hosted: Bool, last: LastMove?)
        /// Which of the shard's events are committed; `stopped`: it will commit no more.
        case committed(shard: Int, epoch: Int, commits: ShardCommits, stopped: Bool)
        case askCommitted(shard: Int, epoch: Int)
        case close(shard: Int, epoch: Int)
        /// The shard's book once every move is committed, nil when it cannot.
        case closed(shard: Int, epoch: Int, book: StationShardBook?)
        /// The job's finish is committed: the host marks the shard's group finished.
        case finishShard(shard: Int)

        public var description: String {
            switch self {
            case .raft(let group, let message): "g\(group) \(message)"
            case .alive: "alive"
            case .forward(let group, _, let ticket): "forward proposal #\(ticket) to g\(group)'s leader"
            case .forwarded(let ticket, let result): "proposal #\(ticket): \(result ?? "not committed")"
            case .open(let shard, let epoch, let hosts): "open shard \(shard) in epoch \(epoch) (hosts \(hosts.joined(separator: ",")))"
            case .opened(let shard, let epoch, let book): "shard \(shard) opened in epoch \(epoch): \(book.map { "\($0.applied) events committed" } ?? "failed")"
            case .move(let shard, let epoch, let move, let ticket):
                "move #\(ticket) at shard \(shard) e\(epoch): user \(move.move.user) attempt \(move.move.attempt) step \(move.move.step) \(move.take ? "take" : "leave") at \(move.station) after \(move.after?.description ?? "nothing")"
            case .answer(let ticket, let outcome, let position): "answer #\(ticket): \(outcome.map { "\($0) at \(position?.description ?? "?")" } ?? "refused")"
            case .fence(let shard, let epoch, let user, let attempt): "fence user \(user) below attempt \(attempt) at shard \(shard) e\(epoch)"
            case .fenced(let shard, let epoch, let user, let attempt, let hosted, let last):
                "fenced user \(user) attempt \(attempt) at shard \(shard) e\(epoch): \(hosted ? last.map { "step \($0.mark.step) at \($0.position)" } ?? "no move" : "not hosted")"
            case .committed(let shard, let epoch, let commits, let stopped): "shard \(shard) e\(epoch) committed \(commits)\(stopped ? ", stopped" : "")"
            case .askCommitted(let shard, let epoch): "how far has shard \(shard) e\(epoch) committed?"
            case .close(let shard, let epoch): "close shard \(shard) e\(epoch)"
            case .closed(let shard, let epoch, let book): "shard \(shard) e\(epoch) closed: \(book.map { "\($0.applied) events" } ?? "failed")"
            case .finishShard(let shard): "the job finished: finish shard \(shard)"
            }
        }

        public func trace(into hasher: inout TraceHasher) {
            switch self {
            case .raft(let group, let message): hasher.combine(400); hasher.combine(group); message.trace(into: &hasher)
            case .alive: hasher.combine(401)
            case .forward(let group, let command, let ticket): hasher.combine(402); hasher.combine(group); hasher.combine(command.utf8.count); hasher.combine(ticket)
            case .forwarded(let ticket, let result): hasher.combine(403); hasher.combine(ticket); hasher.combine(result ?? "-")
            case .open(let shard, let epoch, let hosts): hasher.combine(404); hasher.combine(shard); hasher.combine(epoch); hosts.forEach { hasher.combine($0) }
            case .opened(let shard, let epoch, let book): hasher.combine(405); hasher.combine(shard); hasher.combine(epoch); hasher.combine(book?.applied ?? -1)
            case .move(let shard, let epoch, let move, let ticket):
                hasher.combine(406); hasher.combine(shard); hasher.combine(epoch); hasher.combine(ticket)
                hasher.combine(move.move.user); hasher.combine(move.move.attempt); hasher.combine(move.move.step); hasher.combine(move.station)
                hasher.combine(move.after?.seq ?? -1)
            case .answer(let ticket, let outcome, let position):
                hasher.combine(407); hasher.combine(ticket); hasher.combine(outcome.map { $0 ? 1 : 0 } ?? -1); hasher.combine(position?.seq ?? -1)
            case .fence(let shard, let epoch, let user, let attempt): hasher.combine(408); hasher.combine(shard); hasher.combine(epoch); hasher.combine(user); hasher.combine(attempt)
            case .fenced(let shard, let epoch, let user, let attempt, let hosted, let last):
                hasher.combine(409); hasher.combine(shard); hasher.combine(epoch); hasher.combine(user); hasher.combine(attempt); hasher.combine(hosted)
                hasher.combine(last?.mark.step ?? -1)
            case .committed(let shard, let epoch, let commits, let stopped): hasher.combine(410); hasher.combine(shard); hasher.combine(epoch); hasher.combine(commits.through); hasher.combine(commits.above.sorted().reduce(0) { $0 &* 31 &+ $1 }); hasher.combine(stopped)
            case .askCommitted(let shard, let epoch): hasher.combine(411); hasher.combine(shard); hasher.combine(epoch)
            case .close(let shard, let epoch): hasher.combine(412); hasher.combine(shard); hasher.combine(epoch)
            case .closed(let shard, let epoch, let book): hasher.combine(413); hasher.combine(shard); hasher.combine(epoch); hasher.combine(book?.applied ?? -1)
            case .finishShard(let shard): hasher.combine(414); hasher.combine(shard)
            }
        }
    }

    /// What a node waits for.
    public enum Timer: SimulationTraceable, Sendable {
        case tick(group: Int, generation: Int)
        case flushed(group: Int, batch: Int)
        /// The coordinator's next round.
        case round(generation: Int)
        /// The node's hosts go on: open, commit, wait for dependencies, finish.
        case hostRound
        /// The membership's heartbeat.
        case heartbeat
        /// The node looks at its groups (`JobGroups.watch`): finished ones are removed.
        case watch
        /// A proposal's outcome is known here.
        case proposalDone(ticket: Int)
        /// A proposal's time is up.
        case proposalTimeout(ticket: Int)

        public var description: String {
            switch self {
            case .tick(let group, let generation): "g\(group) tick #\(generation)"
            case .flushed(let group, let batch): "g\(group) flush done through write \(batch)"
            case .round(let generation): "round #\(generation)"
            case .hostRound: "host round"
            case .heartbeat: "heartbeat"
            case .watch: "watch the groups"
            case .proposalDone(let ticket): "proposal #\(ticket) done"
            case .proposalTimeout(let ticket): "proposal #\(ticket) times out"
            }
        }

        public func trace(into hasher: inout TraceHasher) {
            switch self {
            case .tick(let group, let generation): hasher.combine(501); hasher.combine(group); hasher.combine(generation)
            case .flushed(let group, let batch): hasher.combine(502); hasher.combine(group); hasher.combine(batch)
            case .round(let generation): hasher.combine(503); hasher.combine(generation)
            case .hostRound: hasher.combine(504)
            case .heartbeat: hasher.combine(505)
            case .watch: hasher.combine(508)
            case .proposalDone(let ticket): hasher.combine(506); hasher.combine(ticket)
            case .proposalTimeout(let ticket): hasher.combine(507); hasher.combine(ticket)
            }
        }
    }

    // MARK: - State

    /// What a proposal a node made is for; its outcome goes there.
    enum Purpose {
        case shardStart(host: Int)
        case shardTakeOver(host: Int)
        case shardBatch(host: Int, seqs: [Int])
        case shardFinish
        case jobStart(term: Int)
        case jobTakeOver(term: Int, epoch: Int)
        case jobRecord(term: Int, epoch: Int, count: Int)
        case jobFinish(term: Int)
    }

    enum Outcome {
        case result(String)
        /// Not committed, or not known to be (the leader stepped down, the time ran out).
        case lost

        var text: String? {
            if case .result(let text) = self { return text }
            return nil
        }
    }

    /// A leader's proposal waiting to be applied, and whom to tell.
    struct Waiter {
        var term: Int
        var ticket: Int
        var proposer: Int
    }

    /// What the model proposed, by group and command (for the checks).
    enum Command {
        case shardStart
        case shardTakeOver(epoch: Int)
        case shardBatch(epoch: Int, moves: [StationShardBook.ShardMove], seqs: [Int], outcomes: [Bool])
        case shardFinish
        case jobStart
        case jobTakeOver
        case jobRecord(epoch: Int, accepted: [Int])
        case jobFinish
    }

    /// A shard hosted on a node in one epoch (`BikeShards`' entry and committer).
    struct Host {
        let id: Int
        let shard: Int
        let epoch: Int
        let hosts: [String]
        let coordinator: String
        let openDeadline: Double
        var ledger: StationShardLedger?
        var startBook: StationShardBook?
        /// The proposal in flight (start, take-over, batch or finish).
        var proposing: Int?
        /// The batch being committed: proposed again until its group commits it, or the
        /// commit patience runs out.
        var batch: (command: String, seqs: [Int], outcomes: [Bool], moves: [StationShardBook.ShardMove], deadline: Double)?
        var retryAt = 0.0
        /// Its start (epoch 0) or its epoch is committed to the shard's group.
        var epochCommitted = false
        /// Events of the other shards known to be committed.
        var known: [Int: ShardCommits] = [:]
        var stoppedShards: Set<Int> = []
        var waitingSince: Double?
        var lastAsked = -1.0
        var finishProposed = false
        var failed = false
    }

    /// A user as the coordinator runs it in its epoch (a worker's attempt and its trail).
    struct UserRun {
        var attempt: Int
        var progress: UserProgress
        var last: StationShardBook.Position?
        var move: (ticket: Int, deadline: Double, station: Int)?
        var fence: (replies: [Int: LastMove?], deadline: Double, lastSent: Double)?
        var lastAsked = -1.0
        var done = false
    }

    enum Phase: Equatable {
        /// Waiting to start the job or its next epoch.
        case lost
        case takingOver
        case opening
        case starting
        case running
        case closing
        case finishing
        case done
    }

    /// The job group's leader coordinating the job, while it leads `term`.
    struct Coordinator {
        let term: Int
        var epoch = -1
        var phase = Phase.lost
        var proposal: Int?
        /// Each shard's host in this epoch, by node number.
        var hosts: [Int] = []
        var books: [Int: StationShardBook] = [:]
        var deadline = 0.0
        var lastSent = -1.0
        var ledger: JobLedger?
        var users: [Int: UserRun] = [:]
        var known: [Int: ShardCommits] = [:]
        var committedEvents = 0

        init(term: Int) { self.term = term }
    }

    /// A node's application: its machines, its proposals, its hosted shards and its
    /// coordinator. A crash loses all of it (the machines come back from the logs).
    struct Node {
        var jobMachine = BikeJobMachine()
        var shardMachines: [StationShardMachine]
        var waiters: [[Int: Waiter]]
        var pending: [Int: Purpose] = [:]
        var outcomes: [Int: Outcome] = [:]
        var hosted: [Int: Host] = [:]
        var coordinator: Coordinator?
        var leadingTerm: Int?
        var roundGeneration = 0
        var lastHeard: [Int: Double] = [:]
        var hostRoundScheduled = false
        /// Since when each group (by index) has been finished here, and without an alive leader.
        var doneSince: [Int: Double] = [:]
        var leaderlessSince: [Int: Double] = [:]

        init(shards: Int, groups: Int) {
            shardMachines = Array(repeating: StationShardMachine(), count: shards)
            waiters = Array(repeating: [:], count: groups)
        }
    }

    struct ShardState: Equatable {
        var book: StationShardBook?
        var epoch: Int
        var finished: Bool
        var refusedEvents: Int

        init(_ machine: StationShardMachine) {
            book = machine.book
            epoch = machine.epoch
            finished = machine.finished
            refusedEvents = machine.refusedEvents
        }
    }

    struct JobState: Equatable {
        var book: BikeJobBook?
        var epoch: Int
        var finished: Bool
        var refusedEvents: Int

        init(_ machine: BikeJobMachine) {
            book = machine.book
            epoch = machine.epoch
            finished = machine.finished
            refusedEvents = machine.refusedEvents
        }
    }

    /// A committed move: where it was made and whose step it was.
    struct CommittedMove {
        var epoch: Int
        var user: Int
        var step: Int
    }

    /// The faults a run draws unless told otherwise.
    public static let faultKinds: [SimulationFault.Kind] = [.crash, .partition, .pause, .loss]
    /// Faults per run.
    public static let faultCount = 2...6

    public let options: Options
    public let nodes: [String]
    public var faultRoles: [String] { ["@host", "@coordinator"] }
    public let job: BikeJob
    /// Each shard's replicas, its first host first.
    public let layout: [[String]]
    let numbers: [String: Int]
    /// Each group's definition: the shards' (by shard), then the job's.
    let rafts: [RaftGroup]
    /// Whether each node (by number) holds a replica of each group.
    let holds: [[Bool]]
    /// Each group's replicas' shells by node number (one that holds none never starts).
    var shells: [[RaftShell]]
    /// Whether each node removed its replica of each group (its files are gone: it never
    /// starts again).
    public private(set) var removed: [[Bool]]
    public internal(set) var invariants: [RaftInvariants]
    /// The first violation any group's `RaftInvariants` found.
    private var raftViolation: String?
    var apps: [Node]
    private var configuration: RaftConfiguration?
    private var eventsPerCommit = 1
    private let totalBikes: Int
    private var jobGroup: Int { options.shards }

    private var nextTicket = 1
    private var nextHost = 1
    private var commands: [[String: Command]]
    private var committedShards: [[ShardState]]
    private var committedJob: [JobState]
    /// Each shard's committed moves by sequence number.
    private var committedMoves: [[Int: CommittedMove]]
    /// Where each shard's batches were first committed, by command.
    private var batchIndex: [[String: Int]]
    /// Each shard's newest committed book.
    private var latestBooks: [StationShardBook?]
    /// Every progress each user had after a move a host applied (and where it began).
    private var history: [Set<UserProgress>]
    /// Each user's progress after its last committed move, on any shard: its committed
    /// moves form one chain, each from where the one before left it.
    private var chain: [UserProgress]
    private var countedIn: [Int: Int] = [:]
    private var countedProgress: [Int: UserProgress] = [:]
    private var failure: String?

    public private(set) var healedAt: Double?
    /// When the job's finish was first committed.
    public private(set) var finishedAt: Double?
    /// When a coordinator first began to close the shards.
    public private(set) var closingBegan: Double?
    /// Crashes of a node hosting a shard with moves it had not committed.
    public private(set) var hostCrashesMidMove = 0
    /// Hosts that stopped (a commit failed, a dependency never committed, replaced) with
    /// moves not committed, without crashing.
    public private(set) var hostsStoppedMidMove = 0
    /// Coordinators lost (crashed or deposed) before the job finished.
    public private(set) var coordinatorsLost = 0
    /// Batches of an older epoch that reached a shard's log after its take-over (refused).
    public private(set) var staleBatchesRefused = 0
    /// Batches committed a second time (proposed again after a proposal whose outcome was
    /// not known, and had committed after all).
    public private(set) var batchesCommittedTwice = 0
    /// Crashes that tore the record being flushed.
    public private(set) var tornRecords = 0
    /// Epochs after the first whose users ran (take-overs).
    public private(set) var takeOvers = 0
    /// Epochs lost by their coordinator (a host gone, an open, fence or close failed).
    public private(set) var epochsLost = 0
    /// Moves answered by a host (fresh ones).
    public private(set) var movesMade = 0
    /// When a replica of any group became a candidate.
    public private(set) var campaigns: [Double] = []

    public init(options: Options = Options()) {
        self.options = options
        let nodeNames = (1...options.nodes).map { "n\($0)" }
        nodes = nodeNames
        numbers = Dictionary(uniqueKeysWithValues: nodeNames.enumerated().map { ($0.element, $0.offset) })
        let replicas = min(3, nodeNames.count)
        let shardCount = options.shards
        let shardReplicas = (0..<shardCount).map { shard in (0..<replicas).map { nodeNames[(shard + $0) % nodeNames.count] } }
        layout = shardReplicas
        let definitions = shardReplicas.map { replicas in
            // Names are generated: never empty, never repeated.
            try! RaftGroup(replicas: replicas, firstLeader: replicas[0])
        } + [try! RaftGroup(replicas: Array(nodeNames.prefix(replicas)), firstLeader: nodeNames[0])]
        rafts = definitions
        holds = definitions.map { definition in nodeNames.map { definition.replicas.contains($0) } }
        shells = definitions.map { _ in nodeNames.map { _ in RaftShell() } }
        removed = definitions.map { _ in nodeNames.map { _ in false } }
        invariants = definitions.map { RaftInvariants(group: $0) }
        apps = nodes.map { _ in Node(shards: shardCount, groups: shardCount + 1) }
        let network = Network.synthetic(stations: options.stations, bikes: options.bikesPerStation, emptySlots: options.emptySlotsPerStation)
        job = BikeJob(id: "job-sharded", network: network, options: SpokesBikes.SimulationOptions(users: options.users, paths: options.paths, maxMovesPerUser: options.maxMoves))
        totalBikes = options.stations * options.bikesPerStation
        commands = Array(repeating: [:], count: shardCount + 1)
        committedShards = Array(repeating: [ShardState(StationShardMachine())], count: shardCount)
        committedJob = [JobState(BikeJobMachine())]
        committedMoves = Array(repeating: [:], count: shardCount)
        batchIndex = Array(repeating: [:], count: shardCount)
        latestBooks = Array(repeating: nil, count: shardCount)
        history = Array(repeating: [UserProgress()], count: options.users)
        chain = Array(repeating: UserProgress(), count: options.users)
    }

    public var violation: String? { failure ?? raftViolation }

    /// Keeps the first violation group `group`'s `RaftInvariants` found.
    private mutating func noteRaftViolation(_ group: Int) {
        if raftViolation == nil, let violation = invariants[group].violation { raftViolation = "\(groupName(group)): \(violation)" }
    }

    private mutating func fail(_ message: String) {
        if failure == nil { failure = message }
    }

    func groupName(_ group: Int) -> String { group == jobGroup ? "job group" : "shard \(group)'s group" }

    /// "@coordinator": the node coordinating the job (the newest term); "@host": the node
    /// hosting the most moves not committed yet (or any host).
    public func node(playing role: String) -> String? {
        switch role {
        case "@coordinator":
            return apps.indices
                .compactMap { number in apps[number].coordinator.flatMap { $0.phase == .done ? nil : (number, $0.term) } }
                .max { $0.1 < $1.1 }.map { nodes[$0.0] }
        case "@host":
            let hosting = apps.indices.compactMap { number -> (Int, Int)? in
                let running = apps[number].hosted.values.compactMap { host in host.failed ? nil : host.ledger }
                guard !running.isEmpty else { return nil }
                return (number, running.reduce(0) { $0 + $1.pendingCount })
            }
            return hosting.max { $0.1 < $1.1 || ($0.1 == $1.1 && $0.0 > $1.0) }.map { nodes[$0.0] }
        default:
            return nil
        }
    }

    /// Partitions of `faults` during which an election began in any group.
    public func partitionsDuringElections(_ faults: [SimulationFault]) -> Int {
        faults.count { fault in
            guard case .partition = fault.effect else { return false }
            return campaigns.contains { fault.start <= $0 && $0 <= fault.end }
        }
    }

    /// The scenarios this run (with `faults`) went through, by name.
    public func scenarios(faults: [SimulationFault]) -> [String] {
        var seen: [String] = []
        if hostCrashesMidMove > 0 { seen.append("host crash mid-move") }
        if hostsStoppedMidMove > 0 { seen.append("host stopped mid-move") }
        if coordinatorsLost > 0 { seen.append("coordinator lost") }
        if partitionsDuringElections(faults) > 0 { seen.append("partition during an election") }
        if staleBatchesRefused > 0 { seen.append("stale batch refused after a take-over") }
        if batchesCommittedTwice > 0 { seen.append("batch committed twice") }
        if tornRecords > 0 { seen.append("restart with a torn log record") }
        if takeOvers > 0 { seen.append("take-over") }
        return seen
    }

    // MARK: - Events

    public mutating func start(_ node: String, in context: inout SimulationContext<Self>) {
        guard let number = numbers[node] else { return }
        if configuration == nil {
            var drawn = RaftConfiguration()
            drawn.maxEntriesPerMessage = context.random.element(of: [1, 2, 8, 512])
            drawn.maxMessagesInFlight = context.random.element(of: [1, 2, 8])
            configuration = drawn
            eventsPerCommit = context.random.element(of: [1, 3, 4000])
        }
        apps[number] = Node(shards: options.shards, groups: rafts.count)
        for group in rafts.indices where holds[group][number] && !removed[group][number] {
            startReplica(group, number, in: &context)
        }
        context.schedule(.heartbeat, after: 0)
        if options.finishedGroupLingers != nil { context.schedule(.watch, after: 0.25) }
    }

    public mutating func receive(_ message: Message, from sender: String, at node: String, in context: inout SimulationContext<Self>) {
        guard let number = numbers[node], let from = numbers[sender] else { return }
        apps[number].lastHeard[from] = context.now
        switch message {
        case .raft(let group, let raft):
            guard let actions = shells[group][number].driver?.receive(raft, from: sender, now: context.now) else { return }
            runReplica(group, number, actions, in: &context)
        case .alive:
            break
        case .forward(let group, let command, let ticket):
            guard shells[group][number].replica != nil else { return context.send(.forwarded(ticket: ticket, result: nil), to: sender) }
            let (proposal, actions) = shells[group][number].driver!.propose([command], now: context.now)
            if case .accepted(let term, let indices) = proposal {
                apps[number].waiters[group][indices.lowerBound] = Waiter(term: term, ticket: ticket, proposer: from)
            } else {
                context.send(.forwarded(ticket: ticket, result: nil), to: sender)
            }
            runReplica(group, number, actions, in: &context)
        case .forwarded(let ticket, let result):
            complete(ticket, result.map(Outcome.result) ?? .lost, at: number, in: &context)
        case .open(let shard, let epoch, let hosts):
            open(shard: shard, epoch: epoch, hosts: hosts, coordinator: sender, at: number, in: &context)
        case .move(let shard, let epoch, let move, let ticket):
            hostMove(move, shard: shard, epoch: epoch, ticket: ticket, from: sender, at: number, in: &context)
        case .fence(let shard, let epoch, let user, let attempt):
            let hosted = apps[number].hosted[shard].flatMap { $0.epoch == epoch ? $0.ledger : nil }
            let last = hosted?.fence(user: user, attempt: attempt).map { LastMove(mark: $0.mark, position: $0.position) }
            context.send(.fenced(shard: shard, epoch: epoch, user: user, attempt: attempt, hosted: hosted != nil, last: last), to: sender)
        case .askCommitted(let shard, let epoch):
            if let host = apps[number].hosted[shard], host.epoch == epoch, let ledger = host.ledger {
                context.send(.committed(shard: shard, epoch: epoch, commits: ledger.commits, stopped: host.failed), to: sender)
            } else {
                context.send(.committed(shard: shard, epoch: epoch, commits: ShardCommits(), stopped: true), to: sender)
            }
        case .committed(let shard, let epoch, let commits, let stopped):
            heardCommitted(shard: shard, epoch: epoch, commits: commits, stopped: stopped, at: number, in: &context)
        case .close(let shard, let epoch):
            guard let host = apps[number].hosted[shard], host.epoch == epoch, let ledger = host.ledger, !host.failed else {
                return context.send(.closed(shard: shard, epoch: epoch, book: nil), to: sender)
            }
            ledger.close()
            if ledger.isDrained { context.send(.closed(shard: shard, epoch: epoch, book: ledger.book), to: sender) }
            wakeHosts(number, after: 0, in: &context)
        case .opened(let shard, let epoch, let book):
            opened(shard: shard, epoch: epoch, book: book, from: from, at: number, in: &context)
        case .answer(let ticket, let outcome, let position):
            answered(ticket: ticket, outcome: outcome, position: position, at: number, in: &context)
        case .fenced(let shard, let epoch, let user, let attempt, let hosted, let last):
            fenced(shard: shard, epoch: epoch, user: user, attempt: attempt, hosted: hosted, last: last, at: number, in: &context)
        case .closed(let shard, let epoch, let book):
            closed(shard: shard, epoch: epoch, book: book, from: from, at: number, in: &context)
        case .finishShard(let shard):
            guard apps[number].hosted[shard] != nil else { return }
            propose(StationShardMachine.finish, to: shard, as: .shardFinish, for: .shardFinish, at: number, forward: true, in: &context)
        }
    }

    public mutating func fire(_ timer: Timer, at node: String, in context: inout SimulationContext<Self>) {
        guard let number = numbers[node] else { return }
        switch timer {
        case .tick(let group, let generation):
            guard shells[group][number].tickGeneration == generation,
                  let actions = shells[group][number].driver?.tick(now: context.now) else { return }
            runReplica(group, number, actions, in: &context)
            guard let next = shells[group][number].driver?.nextTick(after: context.now) else { return }
            context.schedule(.tick(group: group, generation: generation), after: next)
        case .flushed(let group, let batch):
            flushed(group, number, batch: batch, in: &context)
        case .round(let generation):
            guard apps[number].roundGeneration == generation, shells[jobGroup][number].replica?.role == .leader,
                  !apps[number].jobMachine.finished else { return }
            coordinate(number, in: &context)
            context.schedule(.round(generation: generation), after: context.random.uniform(in: options.round))
        case .hostRound:
            apps[number].hostRoundScheduled = false
            hostRound(number, in: &context)
        case .heartbeat:
            for other in nodes where other != node { context.send(.alive, to: other) }
            context.schedule(.heartbeat, after: 0.2)
        case .watch:
            watchGroups(number, in: &context)
            context.schedule(.watch, after: 0.25)
        case .proposalDone(let ticket):
            if let outcome = apps[number].outcomes.removeValue(forKey: ticket) { complete(ticket, outcome, at: number, in: &context) }
        case .proposalTimeout(let ticket):
            complete(ticket, .lost, at: number, in: &context)
        }
    }

    public mutating func crash(_ node: String, in context: inout SimulationContext<Self>) {
        guard let number = numbers[node] else { return }
        let midMove = apps[number].hosted.values.contains { host in host.ledger.map { !host.failed && !$0.isDrained } ?? false }
        if midMove {
            hostCrashesMidMove += 1
            context.note("\(node) crashed hosting moves it had not committed")
        }
        if let coordinator = apps[number].coordinator, coordinator.phase != .done {
            coordinatorsLost += 1
            context.note("\(node) crashed coordinating epoch \(coordinator.epoch)")
        }
        for group in rafts.indices where holds[group][number] && !removed[group][number] {
            if crashReplica(group, number, in: &context)?.torn == true { tornRecords += 1 }
        }
        apps[number] = Node(shards: options.shards, groups: rafts.count)
    }

    public mutating func healed(in context: inout SimulationContext<Self>) {
        healedAt = context.now
    }

    public func finalViolation(now: Double) -> String? {
        guard let healedAt else { return "the faults never healed" }
        let bound = healedAt + options.livenessBound
        guard let finishedAt, finishedAt <= bound else {
            let done = committedJob.last?.book.map { "\($0.doneUsers.count) of \(options.users)" } ?? "no"
            return "liveness: the job's finish was not committed by \(fixed(bound, 3))s (\(fixed(options.livenessBound, 0))s after the faults healed); \(done) users done in the committed job book, epoch \(committedJob.last?.epoch ?? 0)"
        }
        let cut = committedCut()
        if cut.bikesInPlay != totalBikes { return "liveness: the final committed cut has \(cut.bikesInPlay) bikes in play, of \(totalBikes)" }
        for user in cut.entries.indices {
            let progress = cut.entries[user].progress
            if !progress.isFinished(paths: options.paths) && progress.moves < options.maxMoves {
                return "liveness: user \(user) ended with \(progress.paths) of \(options.paths) paths in \(progress.moves) moves in the committed cut"
            }
        }
        for number in apps.indices where holds[jobGroup][number] && !removed[jobGroup][number] {
            let machine = apps[number].jobMachine
            guard machine.finished, let book = machine.book else { return "liveness: \(nodes[number]) has not applied the job's finish" }
            if let user = book.entries.indices.first(where: { book.entries[$0].accepted == nil }) { return "liveness: \(nodes[number])'s finished job book has no result for user \(user)" }
        }
        for shard in 0..<options.shards {
            for number in apps.indices where holds[shard][number] && !removed[shard][number] && apps[number].shardMachines[shard].book != latestBooks[shard] {
                return "liveness: \(nodes[number])'s book of shard \(shard) is not the shard's committed book at the end"
            }
        }
        return nil
    }

    // MARK: - Proposals (`RaftHost.propose`, forwarding to the leader)

    /// Proposes `command` to `group` from node `number`: on its replica if it leads, else
    /// (with `forward`) through the leader it knows. The outcome comes to `complete`.
    @discardableResult
    private mutating func propose(_ command: String, to group: Int, as kind: Command, for purpose: Purpose, at number: Int, forward: Bool,
                                  in context: inout SimulationContext<Self>) -> Int {
        let ticket = nextTicket
        nextTicket += 1
        commands[group][command] = kind
        apps[number].pending[ticket] = purpose
        context.schedule(.proposalTimeout(ticket: ticket), after: options.proposalTimeout)
        guard shells[group][number].replica != nil else {
            apps[number].outcomes[ticket] = .lost
            context.schedule(.proposalDone(ticket: ticket), after: 0)
            return ticket
        }
        let (proposal, actions) = shells[group][number].driver!.propose([command], now: context.now)
        switch proposal {
        case .accepted(let term, let indices):
            apps[number].waiters[group][indices.lowerBound] = Waiter(term: term, ticket: ticket, proposer: number)
        case .notLeader(let hint):
            if forward, let hint, hint != nodes[number], numbers[hint] != nil {
                context.send(.forward(group: group, command: command, ticket: ticket), to: hint)
            } else {
                apps[number].outcomes[ticket] = .lost
                context.schedule(.proposalDone(ticket: ticket), after: 0)
            }
        }
        runReplica(group, number, actions, in: &context)
        return ticket
    }

    /// A waiting proposal was applied (its `result`) or will not be known to be.
    private mutating func resolve(_ waiter: Waiter, _ outcome: Outcome, at number: Int, in context: inout SimulationContext<Self>) {
        if waiter.proposer == number {
            apps[number].outcomes[waiter.ticket] = outcome
            context.schedule(.proposalDone(ticket: waiter.ticket), after: 0)
        } else {
            context.send(.forwarded(ticket: waiter.ticket, result: outcome.text), to: nodes[waiter.proposer])
        }
    }

    private mutating func complete(_ ticket: Int, _ outcome: Outcome, at number: Int, in context: inout SimulationContext<Self>) {
        guard let purpose = apps[number].pending.removeValue(forKey: ticket) else { return }
        apps[number].outcomes[ticket] = nil
        switch purpose {
        case .shardStart(let id), .shardTakeOver(let id):
            guard let shard = hostShard(id, at: number) else { return }
            apps[number].hosted[shard]!.proposing = nil
            if let result = outcome.text {
                if result == StationShardMachine.applied {
                    apps[number].hosted[shard]!.epochCommitted = true
                } else {
                    // As `BikeShards.takeOver`: a refused epoch ends the open.
                    failOpen(shard, at: number, reason: "the group refused epoch \(apps[number].hosted[shard]!.epoch): \(result)", in: &context)
                }
            }
            wakeHosts(number, after: outcome.text == nil ? 0.05 : 0, in: &context)
        case .shardBatch(let id, let seqs):
            guard let shard = hostShard(id, at: number), let ledger = apps[number].hosted[shard]!.ledger else { return }
            apps[number].hosted[shard]!.proposing = nil
            guard let result = outcome.text else {
                // `BikeShards.commit`: proposed again 0.1 s later, while the patience lasts.
                guard let batch = apps[number].hosted[shard]!.batch, context.now + 0.1 < batch.deadline, ledger.stop != .failed else {
                    return stop(shard, at: number, reason: "cannot commit", in: &context)
                }
                apps[number].hosted[shard]!.retryAt = context.now + 0.1
                return wakeHosts(number, after: 0.1, in: &context)
            }
            guard result == StationShardMachine.applied else { return stop(shard, at: number, reason: "its replicas refused a batch (\(result))", in: &context) }
            apps[number].hosted[shard]!.batch = nil
            ledger.committed(seqs)
            let host = apps[number].hosted[shard]!
            for name in Set(host.hosts + [host.coordinator]).sorted() {
                context.send(.committed(shard: shard, epoch: host.epoch, commits: ledger.commits, stopped: false), to: name)
            }
            wakeHosts(number, after: 0, in: &context)
        case .shardFinish:
            break
        case .jobStart(let term), .jobTakeOver(let term, _), .jobRecord(let term, _, _), .jobFinish(let term):
            guard var coordinator = apps[number].coordinator, coordinator.term == term, coordinator.proposal == ticket else { return }
            coordinator.proposal = nil
            apps[number].coordinator = coordinator
            coordinatorProposalDone(purpose, outcome, at: number, in: &context)
        }
    }

    private func hostShard(_ id: Int, at number: Int) -> Int? {
        apps[number].hosted.first { $0.value.id == id }?.key
    }

    // MARK: - Hosts (`BikeShards`)

    private mutating func wakeHosts(_ number: Int, after delay: Double, in context: inout SimulationContext<Self>) {
        guard !apps[number].hostRoundScheduled else { return }
        apps[number].hostRoundScheduled = true
        context.schedule(.hostRound, after: delay)
    }

    private mutating func open(shard: Int, epoch: Int, hosts: [String], coordinator: String, at number: Int, in context: inout SimulationContext<Self>) {
        guard (0..<options.shards).contains(shard), holds[shard][number] else {
            return context.send(.opened(shard: shard, epoch: epoch, book: nil), to: coordinator)
        }
        if let existing = apps[number].hosted[shard] {
            if existing.epoch > epoch { return context.send(.opened(shard: shard, epoch: epoch, book: nil), to: coordinator) }
            if existing.epoch == epoch, existing.coordinator == coordinator {
                // The coordinator asks again (its first ask or the answer was lost).
                if existing.failed { context.send(.opened(shard: shard, epoch: epoch, book: nil), to: coordinator) }
                if let book = existing.startBook, !existing.failed { context.send(.opened(shard: shard, epoch: epoch, book: book), to: coordinator) }
                return
            }
            if let ledger = existing.ledger, !existing.failed {
                if !ledger.isDrained { hostsStoppedMidMove += 1 }
                ledger.fail()
            }
            context.note("\(nodes[number]) replaces its host of shard \(shard) in epoch \(existing.epoch)")
        }
        apps[number].hosted[shard] = Host(id: nextHost, shard: shard, epoch: epoch, hosts: hosts, coordinator: coordinator, openDeadline: context.now + options.patience * 1.5)
        nextHost += 1
        wakeHosts(number, after: 0, in: &context)
    }

    private mutating func failOpen(_ shard: Int, at number: Int, reason: String, in context: inout SimulationContext<Self>) {
        guard let host = apps[number].hosted[shard], !host.failed else { return }
        apps[number].hosted[shard]!.failed = true
        context.note("\(nodes[number]) cannot host shard \(shard) in epoch \(host.epoch): \(reason)")
        context.send(.opened(shard: shard, epoch: host.epoch, book: nil), to: host.coordinator)
    }

    /// The host of `shard` stops (`BikeShards.commit`'s `stop`): its ledger fails.
    private mutating func stop(_ shard: Int, at number: Int, reason: String, in context: inout SimulationContext<Self>) {
        guard let host = apps[number].hosted[shard], !host.failed, let ledger = host.ledger else { return }
        if !ledger.isDrained { hostsStoppedMidMove += 1 }
        ledger.fail()
        apps[number].hosted[shard]!.failed = true
        context.note("\(nodes[number]): shard \(shard) stops in epoch \(host.epoch): \(reason); \(ledger.pendingCount) moves not committed")
        context.send(.committed(shard: shard, epoch: host.epoch, commits: ledger.commits, stopped: true), to: host.coordinator)
    }

    private mutating func hostMove(_ move: StationShardBook.ShardMove, shard: Int, epoch: Int, ticket: Int, from sender: String, at number: Int,
                                   in context: inout SimulationContext<Self>) {
        guard let host = apps[number].hosted[shard], host.epoch == epoch, let ledger = host.ledger, !host.failed else {
            return context.send(.answer(ticket: ticket, outcome: nil, position: nil), to: sender)
        }
        let made = ledger.madeCount
        do {
            let (outcome, position) = try ledger.move(move)
            if ledger.madeCount > made {
                movesMade += 1
                let user = move.move.user
                if history.indices.contains(user) {
                    if !history[user].contains(move.before) {
                        fail("per-user prefix: user \(user)'s step \(move.move.step) at shard \(shard) starts from a progress it never had (\(move.before))")
                    }
                    if let after = ledger.book.marks[user]?.progress { history[user].insert(after) }
                }
                wakeHosts(number, after: 0, in: &context)
            }
            context.send(.answer(ticket: ticket, outcome: outcome, position: position), to: sender)
        } catch {
            context.send(.answer(ticket: ticket, outcome: nil, position: nil), to: sender)
        }
    }

    private mutating func heardCommitted(shard: Int, epoch: Int, commits: ShardCommits, stopped: Bool, at number: Int, in context: inout SimulationContext<Self>) {
        for key in apps[number].hosted.keys.sorted() where apps[number].hosted[key]!.epoch == epoch {
            apps[number].hosted[key]!.known[shard, default: ShardCommits()].formUnion(commits)
            if stopped { apps[number].hosted[key]!.stoppedShards.insert(shard) }
            wakeHosts(number, after: 0, in: &context)
        }
        guard var coordinator = apps[number].coordinator, coordinator.epoch == epoch,
              coordinator.phase == .running || coordinator.phase == .closing else { return }
        coordinator.known[shard, default: ShardCommits()].formUnion(commits)
        apps[number].coordinator = coordinator
        if stopped { lose("shard \(shard)'s host stopped", at: number, in: &context) }
    }

    /// Every hosted shard goes on: opening (commit the start or the epoch, then take the
    /// committed book), committing what `ShardCommitOrder` allows, asking the other hosts
    /// for what it waits on, and finishing once closed and drained.
    private mutating func hostRound(_ number: Int, in context: inout SimulationContext<Self>) {
        var again = false
        for shard in apps[number].hosted.keys.sorted() {
            guard let host = apps[number].hosted[shard], !host.failed else { continue }
            guard let ledger = host.ledger else {
                if openStep(shard, at: number, in: &context) { again = true }
                continue
            }
            guard host.proposing == nil else { continue }
            if let batch = host.batch {
                // Its group did not commit it (an election, a leader that moved): again.
                guard context.now >= host.retryAt else {
                    again = true
                    continue
                }
                apps[number].hosted[shard]!.proposing = propose(batch.command, to: shard, as: .shardBatch(epoch: host.epoch, moves: batch.moves, seqs: batch.seqs, outcomes: batch.outcomes),
                                                                 for: .shardBatch(host: host.id, seqs: batch.seqs), at: number, forward: true, in: &context)
                continue
            }
            let known = options.commitIgnoringDependencies ? Dictionary(uniqueKeysWithValues: (0..<options.shards).map { ($0, ShardCommits.everything) }) : host.known
            let (events, seqs, outcomes, waitsFor) = ledger.takeCommittable(limit: eventsPerCommit, known: known)
            if !events.isEmpty {
                let moves = events.map { event in
                    switch event {
                    case .move(let move): move
                    }
                }
                let command = StationShardMachine.record(events, seqs: seqs, outcomes: outcomes, epoch: host.epoch)
                apps[number].hosted[shard]!.waitingSince = nil
                apps[number].hosted[shard]!.batch = (command, seqs, outcomes, moves, context.now + options.commitPatience)
                apps[number].hosted[shard]!.proposing = propose(command, to: shard, as: .shardBatch(epoch: host.epoch, moves: moves, seqs: seqs, outcomes: outcomes),
                                                                 for: .shardBatch(host: host.id, seqs: seqs), at: number, forward: true, in: &context)
                continue
            }
            if let waitsFor {
                guard waitsFor.epoch == host.epoch, host.hosts.indices.contains(waitsFor.shard), !host.stoppedShards.contains(waitsFor.shard) else {
                    stop(shard, at: number, reason: "the move one of its moves follows (\(waitsFor)) was not committed", in: &context)
                    continue
                }
                let since = host.waitingSince ?? context.now
                apps[number].hosted[shard]!.waitingSince = since
                if context.now - since > options.patience {
                    stop(shard, at: number, reason: "the move one of its moves follows (\(waitsFor)) was not committed within \(fixed(options.patience, 0)) s", in: &context)
                    continue
                }
                if context.now - host.lastAsked >= 0.05 {
                    apps[number].hosted[shard]!.lastAsked = context.now
                    context.send(.askCommitted(shard: waitsFor.shard, epoch: host.epoch), to: host.hosts[waitsFor.shard])
                }
                again = true
            } else if ledger.stop == .closed, ledger.isDrained, !host.finishProposed {
                // Its group is marked finished only once the job's finish is committed
                // (`finishShard`), as `BikeShards.stopHosting` does.
                apps[number].hosted[shard]!.finishProposed = true
                context.send(.closed(shard: shard, epoch: host.epoch, book: ledger.book), to: host.coordinator)
            }
        }
        if again { wakeHosts(number, after: 0.02, in: &context) }
    }

    /// One step of opening `shard` here; true while it is still opening.
    private mutating func openStep(_ shard: Int, at number: Int, in context: inout SimulationContext<Self>) -> Bool {
        let host = apps[number].hosted[shard]!
        guard context.now <= host.openDeadline else {
            failOpen(shard, at: number, reason: "not opened in time", in: &context)
            return false
        }
        guard host.proposing == nil else { return true }
        let machine = apps[number].shardMachines[shard]
        if host.epoch == 0 {
            guard let book = machine.book else {
                guard !host.epochCommitted else { return true }
                let start = StationShardBook(shard: shard, shardCount: options.shards, network: job.network.stations, goalIndex: nil)
                let ticket = propose(StationShardMachine.start(start), to: shard, as: .shardStart, for: .shardStart(host: host.id), at: number, forward: true, in: &context)
                apps[number].hosted[shard]!.proposing = ticket
                return true
            }
            guard machine.epoch == 0, book.applied == 0 else {
                failOpen(shard, at: number, reason: "its group is past epoch 0 (epoch \(machine.epoch), \(book.applied) events)", in: &context)
                return false
            }
            begin(shard, book: book, at: number, in: &context)
            return false
        }
        guard !removed[shard][number] else {
            failOpen(shard, at: number, reason: "it holds no replica of shard \(shard)'s group (removed)", in: &context)
            return false
        }
        guard host.epochCommitted else {
            let ticket = propose(StationShardMachine.takeOver(epoch: host.epoch), to: shard, as: .shardTakeOver(epoch: host.epoch),
                                 for: .shardTakeOver(host: host.id), at: number, forward: true, in: &context)
            apps[number].hosted[shard]!.proposing = ticket
            return true
        }
        // This replica applies the epoch after the leader committed it.
        guard machine.epoch >= host.epoch else { return true }
        guard machine.epoch == host.epoch, let book = machine.book else {
            failOpen(shard, at: number, reason: "its group is in epoch \(machine.epoch)", in: &context)
            return false
        }
        begin(shard, book: book, at: number, in: &context)
        return false
    }

    private mutating func begin(_ shard: Int, book: StationShardBook, at number: Int, in context: inout SimulationContext<Self>) {
        let host = apps[number].hosted[shard]!
        apps[number].hosted[shard]!.ledger = StationShardLedger(book: book, epoch: host.epoch)
        apps[number].hosted[shard]!.startBook = book
        context.note("\(nodes[number]) hosts shard \(shard) in epoch \(host.epoch) from \(book.applied) committed events")
        context.send(.opened(shard: shard, epoch: host.epoch, book: book), to: host.coordinator)
    }

    // MARK: - The coordinator (`BikeJob.run`, `ShardedRun`, `ReplicatedBikeJobs.nextEpoch`)

    private mutating func coordinate(_ number: Int, in context: inout SimulationContext<Self>) {
        guard let replica = shells[jobGroup][number].replica else { return }
        if apps[number].coordinator == nil {
            let last = replica.lastLogPosition
            guard replica.appliedIndex == last.index, last.term == replica.term else { return }
            apps[number].coordinator = Coordinator(term: replica.term)
            context.note("\(nodes[number]) coordinates the job in term \(replica.term)")
        }
        guard let coordinator = apps[number].coordinator else { return }
        switch coordinator.phase {
        case .lost:
            guard coordinator.proposal == nil else { return }
            let machine = apps[number].jobMachine
            if machine.job == nil {
                beginOpening(epoch: 0, at: number, in: &context)
            } else {
                // Every shard needs an alive replica to host it; until then the epoch is not spent.
                guard chooseHosts(at: number, now: context.now) != nil else { return }
                let epoch = max(machine.epoch, coordinator.epoch) + 1
                apps[number].coordinator!.epoch = epoch
                apps[number].coordinator!.phase = .takingOver
                apps[number].coordinator!.proposal = propose(BikeJobMachine.takeOver(epoch: epoch), to: jobGroup, as: .jobTakeOver,
                                                             for: .jobTakeOver(term: coordinator.term, epoch: epoch), at: number, forward: false, in: &context)
            }
        case .opening:
            guard context.now <= coordinator.deadline else { return lose("its shards did not open in time", at: number, in: &context) }
            if coordinator.hosts.isEmpty {
                guard let hosts = chooseHosts(at: number, now: context.now) else { return }
                apps[number].coordinator!.hosts = hosts
                context.note("\(nodes[number]) opens epoch \(coordinator.epoch) on \(hosts.map { nodes[$0] }.joined(separator: ","))")
            }
            // A call to a member declared dead fails at once (its connection is closed).
            if let gone = coordinator.hosts.indices.first(where: { coordinator.books[$0] == nil && isDead(coordinator.hosts[$0], at: number, now: context.now) }) {
                return lose("shard \(gone) cannot be hosted on \(nodes[coordinator.hosts[gone]]), a dead member", at: number, in: &context)
            }
            sendAgain(at: number, in: &context)
        case .running:
            run(number, in: &context)
        case .closing:
            guard context.now <= coordinator.deadline else { return lose("its shards did not close in time", at: number, in: &context) }
            if let shard = coordinator.hosts.indices.first(where: { coordinator.books[$0] == nil }), isDead(coordinator.hosts[shard], at: number, now: context.now) {
                return lose("shard \(shard)'s host \(nodes[coordinator.hosts[shard]]) could not commit its last moves: a dead member", at: number, in: &context)
            }
            sendAgain(at: number, in: &context)
        case .takingOver, .starting, .finishing, .done:
            break
        }
    }

    /// Whether node `other` is an alive member as node `number` sees it (heard within `suspectAfter`).
    private func isAlive(_ other: Int, at number: Int, now: Double) -> Bool {
        other == number || now - (apps[number].lastHeard[other] ?? -100) <= options.suspectAfter
    }

    /// Whether node `number` holds node `other` dead (not heard within `deadAfter`).
    private func isDead(_ other: Int, at number: Int, now: Double) -> Bool {
        other != number && now - (apps[number].lastHeard[other] ?? -100) > options.deadAfter
    }

    /// Where each shard is hosted (`ReplicatedBikeJobs.hosts(for:alive:job:)`): its first
    /// host while alive, else its alive replica hosting the fewest shards so far; nil when
    /// a shard has no alive replica.
    private func chooseHosts(at number: Int, now: Double) -> [Int]? {
        let alive = { (name: String) -> Bool in numbers[name].map { isAlive($0, at: number, now: now) } ?? false }
        var hosts: [Int?] = layout.map { replicas in alive(replicas[0]) ? numbers[replicas[0]] : nil }
        for shard in layout.indices where hosts[shard] == nil {
            let candidates = layout[shard].filter(alive).compactMap { numbers[$0] }
            guard let host = candidates.min(by: { a, b in hosts.count { $0 == a } < hosts.count { $0 == b } }) else { return nil }
            hosts[shard] = host
        }
        return hosts.compactMap { $0 }
    }

    private mutating func beginOpening(epoch: Int, at number: Int, in context: inout SimulationContext<Self>) {
        apps[number].coordinator!.epoch = epoch
        apps[number].coordinator!.phase = .opening
        apps[number].coordinator!.hosts = []
        apps[number].coordinator!.books = [:]
        apps[number].coordinator!.lastSent = -1
        apps[number].coordinator!.deadline = context.now + options.patience * 2
        coordinate(number, in: &context)
    }

    /// Sends the opens not answered yet (all at once, as `openShards` does), or the close of
    /// the first shard not closed yet (one after the other, as `ShardedRun.finish` does),
    /// every 0.25 s.
    private mutating func sendAgain(at number: Int, in context: inout SimulationContext<Self>) {
        let coordinator = apps[number].coordinator!
        guard !coordinator.hosts.isEmpty, context.now - coordinator.lastSent >= 0.25 else { return }
        apps[number].coordinator!.lastSent = context.now
        let names = coordinator.hosts.map { nodes[$0] }
        for (shard, host) in coordinator.hosts.enumerated() where coordinator.books[shard] == nil {
            guard coordinator.phase == .opening else {
                return context.send(.close(shard: shard, epoch: coordinator.epoch), to: nodes[host])
            }
            context.send(.open(shard: shard, epoch: coordinator.epoch, hosts: names), to: nodes[host])
        }
    }

    private mutating func opened(shard: Int, epoch: Int, book: StationShardBook?, from: Int, at number: Int, in context: inout SimulationContext<Self>) {
        guard let coordinator = apps[number].coordinator, coordinator.phase == .opening, coordinator.epoch == epoch,
              coordinator.hosts.indices.contains(shard), coordinator.hosts[shard] == from, coordinator.books[shard] == nil else { return }
        guard let book else { return lose("shard \(shard) cannot be hosted on \(nodes[from])", at: number, in: &context) }
        apps[number].coordinator!.books[shard] = book
        guard apps[number].coordinator!.books.count == options.shards else { return }
        if apps[number].jobMachine.job == nil {
            // The job's first run: its shards are open, now the job (with their layout) is committed.
            apps[number].coordinator!.phase = .starting
            apps[number].coordinator!.proposal = propose(BikeJobMachine.start(job, shards: layout), to: jobGroup, as: .jobStart,
                                                         for: .jobStart(term: coordinator.term), at: number, forward: false, in: &context)
        } else {
            startRunning(at: number, in: &context)
        }
    }

    /// Builds the job's book from the committed job book and every shard's committed book,
    /// and runs every user not done from there with an attempt above every one seen.
    private mutating func startRunning(at number: Int, in context: inout SimulationContext<Self>) {
        guard var coordinator = apps[number].coordinator, var book = apps[number].jobMachine.book else {
            return lose("the job's book is not here", at: number, in: &context)
        }
        for shard in 0..<options.shards { book.adopt(coordinator.books[shard]!) }
        checkCut(book, current: false, "the cut epoch \(coordinator.epoch) starts from")
        let ledger = JobLedger(book: book, recording: true)
        coordinator.ledger = ledger
        coordinator.users = [:]
        coordinator.known = Dictionary(uniqueKeysWithValues: coordinator.books.map { ($0.key, ShardCommits(through: $0.value.applied)) })
        coordinator.committedEvents = 0
        let done = book.doneUsers
        for user in 0..<options.users where !done.contains(user) {
            let attempt = book.entries[user].attempt + 1
            let progress = ledger.beginAttempt(user: user, attempt: attempt)
            coordinator.users[user] = UserRun(attempt: attempt, progress: progress, last: nil)
        }
        coordinator.phase = .running
        apps[number].coordinator = coordinator
        if coordinator.epoch > 0 { takeOvers += 1 }
        context.note("\(nodes[number]) runs epoch \(coordinator.epoch): \(coordinator.users.count) users to go")
    }

    private mutating func coordinatorProposalDone(_ purpose: Purpose, _ outcome: Outcome, at number: Int, in context: inout SimulationContext<Self>) {
        let ok = outcome.text == BikeJobMachine.applied
        switch purpose {
        case .jobStart:
            guard apps[number].coordinator!.phase == .starting else { return }
            ok ? startRunning(at: number, in: &context) : lose("the job was not committed", at: number, in: &context)
        case .jobTakeOver(_, let epoch):
            guard apps[number].coordinator!.phase == .takingOver else { return }
            if ok, apps[number].jobMachine.epoch == epoch {
                beginOpening(epoch: epoch, at: number, in: &context)
            } else {
                apps[number].coordinator!.phase = .lost
            }
        case .jobRecord(_, let epoch, let count):
            guard apps[number].coordinator!.epoch == epoch, apps[number].coordinator!.phase == .running else { return }
            guard ok else { return lose("its replicas did not take its changes (\(outcome.text ?? "not committed"))", at: number, in: &context) }
            apps[number].coordinator!.committedEvents += count
        case .jobFinish:
            guard apps[number].coordinator!.phase == .finishing else { return }
            if ok {
                apps[number].coordinator!.phase = .done
                context.note("\(nodes[number]) finished the job")
                for (shard, host) in apps[number].coordinator!.hosts.enumerated() {
                    context.send(.finishShard(shard: shard), to: nodes[host])
                }
            } else {
                lose("the job's finish was not committed", at: number, in: &context)
            }
        default:
            break
        }
    }

    /// The epoch is lost (`ShardedRun.lose`): the run stops, what it did not commit is
    /// dropped, and the coordinator starts the next epoch on a later round.
    private mutating func lose(_ reason: String, at number: Int, in context: inout SimulationContext<Self>) {
        guard let coordinator = apps[number].coordinator, coordinator.phase != .lost, coordinator.phase != .done else { return }
        coordinator.ledger?.abandonRecording()
        apps[number].coordinator!.ledger = nil
        apps[number].coordinator!.users = [:]
        apps[number].coordinator!.phase = .lost
        epochsLost += 1
        context.note("\(nodes[number]): epoch \(coordinator.epoch) stops: \(reason)")
    }

    /// A round of the running epoch: hosts checked, users acting, changes committed, and
    /// the shards closed once every user is done.
    private mutating func run(_ number: Int, in context: inout SimulationContext<Self>) {
        let coordinator = apps[number].coordinator!
        for host in coordinator.hosts where isDead(host, at: number, now: context.now) {
            return lose("the host of a station shard, \(nodes[host]), is dead", at: number, in: &context)
        }
        for user in coordinator.users.keys.sorted() {
            guard let run = apps[number].coordinator?.users[user] else { return }
            if let move = run.move, context.now > move.deadline { retry(user, at: number, why: "its move timed out", in: &context) }
            if let fence = run.fence, context.now > fence.deadline { return lose("cannot fence user \(user) on every shard", at: number, in: &context) }
            if apps[number].coordinator?.users[user]?.fence != nil { sendFences(user, at: number, in: &context) }
        }
        for _ in 0..<context.random.integer(in: options.actionsPerRound) where apps[number].coordinator?.phase == .running {
            act(number, in: &context)
        }
        guard apps[number].coordinator?.phase == .running else { return }
        commitJobEvents(number, in: &context)
        let now = apps[number].coordinator!
        if now.proposal == nil, now.users.values.allSatisfy(\.done), let ledger = now.ledger, now.committedEvents == ledger.eventsMade {
            apps[number].coordinator!.phase = .closing
            if closingBegan == nil { closingBegan = context.now }
            apps[number].coordinator!.books = [:]
            apps[number].coordinator!.lastSent = -1
            apps[number].coordinator!.deadline = context.now + options.patience * 3
            context.note("\(nodes[number]) closes the shards of epoch \(now.epoch)")
            sendAgain(at: number, in: &context)
        }
    }

    /// One user's next action: its result counted (once its last move is committed), a
    /// retry, or its next move.
    private mutating func act(_ number: Int, in context: inout SimulationContext<Self>) {
        let coordinator = apps[number].coordinator!
        let ready = coordinator.users.keys.sorted().filter { user in
            let run = coordinator.users[user]!
            return !run.done && run.move == nil && run.fence == nil
        }
        guard !ready.isEmpty, let ledger = coordinator.ledger else { return }
        let user = context.random.element(of: ready)
        var run = coordinator.users[user]!
        let finished = run.progress.isFinished(paths: options.paths)
        if finished || run.progress.moves >= options.maxMoves {
            // `flush`: a result counts only once the user's moves are committed.
            if let last = run.last, coordinator.known[last.shard]?.contains(last.seq) != true {
                if context.now - run.lastAsked >= 0.1 {
                    run.lastAsked = context.now
                    apps[number].coordinator!.users[user] = run
                    context.send(.askCommitted(shard: last.shard, epoch: coordinator.epoch), to: nodes[coordinator.hosts[last.shard]])
                }
                return
            }
            let ending: SpokesBikes.SimulationResult.Ending = finished ? .finishedPaths : .gaveUp
            if ledger.accept(user: user, attempt: run.attempt, ending: ending) == nil {
                fail("counted once: the coordinator of epoch \(coordinator.epoch) could not count user \(user)'s result from its current attempt \(run.attempt)")
            }
            ledger.end(user: user, BikeJobBook.UserEnd(ending: ending, node: nodes[number], attempts: run.attempt, reasons: []))
            run.done = true
            apps[number].coordinator!.users[user] = run
        } else if context.random.chance(options.retryChance) {
            retry(user, at: number, why: "its worker failed", in: &context)
        } else {
            let station = context.random.index(below: options.stations)
            let shard = StationShardBook.shard(ofStation: station, shardCount: options.shards)
            let move = StationShardBook.ShardMove(
                move: Move(user: user, attempt: run.attempt, step: run.progress.moves + 1), station: station,
                take: !run.progress.hasBike, before: run.progress, after: run.last)
            let ticket = nextTicket
            nextTicket += 1
            run.move = (ticket, context.now + options.moveTimeout, station)
            apps[number].coordinator!.users[user] = run
            context.send(.move(shard: shard, epoch: coordinator.epoch, move, ticket: ticket), to: nodes[coordinator.hosts[shard]])
        }
    }

    /// The user's attempt failed: it runs again as the next attempt, fenced on every shard
    /// first, and resumes from its furthest move on any of them.
    private mutating func retry(_ user: Int, at number: Int, why: String, in context: inout SimulationContext<Self>) {
        guard var run = apps[number].coordinator?.users[user], let ledger = apps[number].coordinator?.ledger else { return }
        run.attempt += 1
        _ = ledger.beginAttempt(user: user, attempt: run.attempt)
        run.move = nil
        run.fence = ([:], context.now + options.patience, -1)
        apps[number].coordinator!.users[user] = run
        context.note("user \(user) runs again as attempt \(run.attempt): \(why)")
        sendFences(user, at: number, in: &context)
    }

    private mutating func sendFences(_ user: Int, at number: Int, in context: inout SimulationContext<Self>) {
        let coordinator = apps[number].coordinator!
        guard let run = coordinator.users[user], let fence = run.fence, context.now - fence.lastSent >= 0.25 else { return }
        apps[number].coordinator!.users[user]!.fence!.lastSent = context.now
        for (shard, host) in coordinator.hosts.enumerated() where fence.replies[shard] == nil {
            context.send(.fence(shard: shard, epoch: coordinator.epoch, user: user, attempt: run.attempt), to: nodes[host])
        }
    }

    private mutating func fenced(shard: Int, epoch: Int, user: Int, attempt: Int, hosted: Bool, last: LastMove?, at number: Int, in context: inout SimulationContext<Self>) {
        guard let coordinator = apps[number].coordinator, coordinator.phase == .running, coordinator.epoch == epoch,
              var run = coordinator.users[user], run.attempt == attempt, var fence = run.fence, fence.replies[shard] == nil else { return }
        guard hosted else { return lose("cannot fence user \(user) on shard \(shard)", at: number, in: &context) }
        fence.replies[shard] = .some(last)
        guard fence.replies.count == options.shards else {
            apps[number].coordinator!.users[user]!.fence = fence
            return
        }
        let start = coordinator.ledger?.book.entries[user].progress ?? UserProgress()
        let furthest = fence.replies.keys.sorted().compactMap { fence.replies[$0] ?? nil }.max { $0.mark.step < $1.mark.step }
        if let furthest, furthest.mark.step > start.moves {
            run.progress = furthest.mark.progress
            run.last = furthest.position
        } else {
            run.progress = start
            run.last = nil
        }
        run.fence = nil
        apps[number].coordinator!.users[user] = run
    }

    private mutating func answered(ticket: Int, outcome: Bool?, position: StationShardBook.Position?, at number: Int, in context: inout SimulationContext<Self>) {
        guard let coordinator = apps[number].coordinator, coordinator.phase == .running,
              let user = coordinator.users.first(where: { $0.value.move?.ticket == ticket })?.key, var run = coordinator.users[user], let move = run.move else { return }
        guard let outcome, let position else { return retry(user, at: number, why: "its move was refused", in: &context) }
        run.progress.record(succeeded: outcome, at: "\(move.station)", goal: nil)
        run.last = position
        run.move = nil
        apps[number].coordinator!.users[user] = run
    }

    private mutating func closed(shard: Int, epoch: Int, book: StationShardBook?, from: Int, at number: Int, in context: inout SimulationContext<Self>) {
        guard let coordinator = apps[number].coordinator, coordinator.phase == .closing, coordinator.epoch == epoch,
              coordinator.hosts.indices.contains(shard), coordinator.hosts[shard] == from, coordinator.books[shard] == nil else { return }
        guard let book else { return lose("shard \(shard) could not commit its last moves", at: number, in: &context) }
        apps[number].coordinator!.books[shard] = book
        guard apps[number].coordinator!.books.count == options.shards, let ledger = coordinator.ledger else {
            // The next shard's turn, with a time of its own.
            apps[number].coordinator!.deadline = context.now + options.patience * 3
            apps[number].coordinator!.lastSent = -1
            return sendAgain(at: number, in: &context)
        }
        ledger.adopt((0..<options.shards).map { apps[number].coordinator!.books[$0]! })
        let final = ledger.book
        checkCut(final, current: false, "the job's final book (epoch \(epoch))")
        if final.doneUsers.count != options.users { fail("counted once: the job's final book has \(final.doneUsers.count) of \(options.users) users done") }
        apps[number].coordinator!.phase = .finishing
        apps[number].coordinator!.proposal = propose(BikeJobMachine.finish, to: jobGroup, as: .jobFinish, for: .jobFinish(term: coordinator.term),
                                                     at: number, forward: false, in: &context)
    }

    /// With no batch in flight, commits the ledger's next events (attempts, results, ends)
    /// to the job group.
    private mutating func commitJobEvents(_ number: Int, in context: inout SimulationContext<Self>) {
        let coordinator = apps[number].coordinator!
        guard coordinator.proposal == nil, let ledger = coordinator.ledger else { return }
        let (events, _) = ledger.takeEvents(limit: eventsPerCommit)
        guard !events.isEmpty else { return }
        let accepted = events.compactMap { event -> Int? in
            if case .accepted(let user, _, _) = event { return user }
            return nil
        }
        apps[number].coordinator!.proposal = propose(BikeJobMachine.record(events, epoch: coordinator.epoch), to: jobGroup,
                                                     as: .jobRecord(epoch: coordinator.epoch, accepted: accepted),
                                                     for: .jobRecord(term: coordinator.term, epoch: coordinator.epoch, count: events.count),
                                                     at: number, forward: false, in: &context)
    }

    // MARK: - The groups' state machines and the checks

    private mutating func applyEntries(_ group: Int, _ entries: [RaftEntry], at number: Int, in context: inout SimulationContext<Self>) {
        for entry in entries {
            let result = group == jobGroup ? applyJob(entry, at: number, now: context.now) : applyShard(group, entry, at: number, in: &context)
            if let waiter = apps[number].waiters[group].removeValue(forKey: entry.index) {
                resolve(waiter, waiter.term == entry.term ? result.map(Outcome.result) ?? .lost : .lost, at: number, in: &context)
            }
        }
    }

    private mutating func applyShard(_ shard: Int, _ entry: RaftEntry, at number: Int, in context: inout SimulationContext<Self>) -> String? {
        let before = ShardState(apps[number].shardMachines[shard])
        let result = entry.command.map { apps[number].shardMachines[shard].apply($0) }
        let state = ShardState(apps[number].shardMachines[shard])
        let node = nodes[number]
        let kind = entry.command.flatMap { commands[shard][$0] }
        if state.book != before.book {
            switch kind {
            case .shardStart? where before.book == nil:
                break
            case .shardBatch(let epoch, _, _, _)? where epoch == before.epoch:
                break
            case .shardBatch(let epoch, _, _, _)?:
                fail("epoch fence: \(node) applied a batch of epoch \(epoch) to shard \(shard) in epoch \(before.epoch) (index \(entry.index)), changing its book")
            default:
                fail("committed prefix: index \(entry.index) of shard \(shard)'s log (not a batch of its host) changed \(node)'s book")
            }
        }
        if state.refusedEvents > before.refusedEvents {
            let refused = state.refusedEvents - before.refusedEvents
            if let command = entry.command, let first = batchIndex[shard][command], first < entry.index {
                fail("epoch fence: \(node)'s book of shard \(shard) refused \(refused) events of a batch proposed again (committed at \(first) and again at \(entry.index)): events applied before are repeats, not refusals")
            } else {
                fail("epoch fence: \(node)'s book of shard \(shard) refused \(refused) events of the batch committed at \(entry.index) (made from a book the group does not hold)")
            }
        }
        if entry.index < committedShards[shard].count {
            if committedShards[shard][entry.index] != state {
                fail("replicas agree: \(node)'s state of shard \(shard) after index \(entry.index) differs from the state committed there")
            }
            return result
        }
        guard entry.index == committedShards[shard].count else { return result }
        committedShards[shard].append(state)
        if let command = entry.command, case .shardBatch? = kind {
            if batchIndex[shard][command] == nil {
                batchIndex[shard][command] = entry.index
            } else {
                batchesCommittedTwice += 1
                context.note("shard \(shard)'s batch committed at \(batchIndex[shard][command]!) is committed again at \(entry.index)")
            }
        }
        if case .shardBatch(let epoch, let moves, let seqs, let outcomes)? = kind {
            if epoch < before.epoch {
                staleBatchesRefused += 1
                context.note("a batch of epoch \(epoch) reached shard \(shard)'s log at \(entry.index), after its take-over to epoch \(before.epoch): refused")
            } else if epoch == before.epoch, let startBook = before.book {
                checkCausal(shard, moves, seqs: seqs, outcomes: outcomes, epoch: epoch, from: startBook, index: entry.index)
            }
        }
        if state.book != latestBooks[shard] {
            latestBooks[shard] = state.book
            checkCut(committedCut(), current: true, "the committed cut after shard \(shard)'s index \(entry.index)")
        }
        return result
    }

    /// Invariant 2's causal part, for a batch committed at `shard` on `book`: every move
    /// follows a committed move of the same user one step before (on whichever shard), and
    /// starts from where the user's last committed move left it.
    private mutating func checkCausal(_ shard: Int, _ moves: [StationShardBook.ShardMove], seqs: [Int], outcomes: [Bool], epoch: Int,
                                      from book: StationShardBook, index: Int) {
        var replay = book
        for (move, (seq, recorded)) in zip(moves, zip(seqs, outcomes)) {
            let user = move.move.user
            // A move the book refuses is the machine's refusal (checked as it applies); one
            // applied before is a repeat (its batch was proposed again): neither is new.
            guard let (outcome, _, applied) = try? replay.apply(move, seq: seq, outcome: recorded), applied else { continue }
            committedMoves[shard][seq] = CommittedMove(epoch: epoch, user: user, step: move.move.step)
            if let after = move.after {
                let committed = committedMoves.indices.contains(after.shard) ? committedMoves[after.shard][after.seq] : nil
                guard let committed, committed.user == user, committed.step == move.move.step - 1 else {
                    return fail("per-user prefix: shard \(shard) committed user \(user)'s step \(move.move.step) (index \(index)) before the move it follows, \(after), was committed")
                }
            }
            guard chain.indices.contains(user), move.before == chain[user] else {
                let last = chain.indices.contains(user) ? chain[user].moves : -1
                return fail("per-user prefix: shard \(shard) committed user \(user)'s step \(move.move.step) (index \(index)) from \(move.before.moves) moves, but its committed moves end after move \(last)")
            }
            chain[user].record(succeeded: outcome, at: "\(move.station)", goal: nil)
        }
    }

    /// The job's starting book adopting every shard's newest committed book.
    private func committedCut() -> BikeJobBook {
        var book = BikeJobBook(users: options.users, stations: job.network.stations)
        for case let shard? in latestBooks { book.adopt(shard) }
        return book
    }

    /// Invariants 1 and 2 on a cut: bikes conserved, every user's progress one it had, and
    /// (in the newest committed cut, `current`) counted results unchanged. A coordinator's
    /// cut may be older than the newest: one paused while it opened its epoch builds it
    /// from the books its shards committed then, and can commit nothing from it.
    private mutating func checkCut(_ cut: BikeJobBook, current: Bool, _ what: @autoclosure () -> String) {
        if cut.bikesInPlay != totalBikes {
            return fail("bikes conserved: \(what()) has \(cut.bikesInPlay) bikes in play, of \(totalBikes)")
        }
        for user in cut.entries.indices {
            let progress = cut.entries[user].progress
            if current, progress != chain[user] {
                return fail("per-user prefix: in \(what()), user \(user)'s progress (\(progress.moves) moves) is not where its committed moves end (\(chain[user].moves) moves)")
            }
            if !history[user].contains(progress) {
                return fail("per-user prefix: in \(what()), user \(user)'s progress (\(progress.moves) moves, \(progress.paths) paths) is none it had after its own moves")
            }
            if current, let counted = countedProgress[user], counted != progress {
                return fail("counted once: user \(user)'s counted result (\(counted.moves) moves) changed in \(what()) to \(progress.moves) moves")
            }
        }
    }

    private mutating func applyJob(_ entry: RaftEntry, at number: Int, now: Double) -> String? {
        let before = JobState(apps[number].jobMachine)
        let result = entry.command.map { apps[number].jobMachine.apply($0) }
        let state = JobState(apps[number].jobMachine)
        let node = nodes[number]
        if state.refusedEvents > before.refusedEvents {
            fail("committed prefix: \(node)'s job book refused \(state.refusedEvents - before.refusedEvents) events committed at \(entry.index)")
        }
        if entry.index < committedJob.count {
            if committedJob[entry.index] != state { fail("replicas agree: \(node)'s job state after index \(entry.index) differs from the state committed there") }
            return result
        }
        guard entry.index == committedJob.count else { return result }
        committedJob.append(state)
        switch entry.command.flatMap({ commands[jobGroup][$0] }) {
        case .jobRecord(let epoch, let accepted)? where epoch == before.epoch:
            let cut = committedCut()
            for user in accepted {
                if let earlier = countedIn[user] { fail("counted once: user \(user)'s result was committed in epoch \(earlier) and again in epoch \(epoch)") }
                countedIn[user] = epoch
                let progress = cut.entries[user].progress
                if !progress.isFinished(paths: options.paths) && progress.moves < options.maxMoves {
                    fail("per-user prefix: user \(user)'s result was committed (job index \(entry.index)) while the committed cut has it at \(progress.moves) moves, \(progress.paths) paths")
                }
                countedProgress[user] = progress
            }
        case .jobFinish?:
            if finishedAt == nil, state.finished { finishedAt = now }
        default:
            break
        }
        return result
    }

    private mutating func restoreSnapshot(_ group: Int, _ snapshot: RaftSnapshot, at number: Int, in context: inout SimulationContext<Self>) {
        let node = nodes[number]
        do {
            if group == jobGroup {
                try apps[number].jobMachine.restore(snapshot.data)
                if snapshot.index < committedJob.count, committedJob[snapshot.index] != JobState(apps[number].jobMachine) {
                    invariants[group].snapshotDiffers(node, snapshot)
                }
            } else {
                try apps[number].shardMachines[group].restore(snapshot.data)
                if snapshot.index < committedShards[group].count, committedShards[group][snapshot.index] != ShardState(apps[number].shardMachines[group]) {
                    invariants[group].snapshotDiffers(node, snapshot)
                }
            }
        } catch {
            return fail("\(node) cannot restore its snapshot of \(groupName(group)) through \(snapshot.index): \(error)")
        }
        for index in apps[number].waiters[group].keys.sorted() where index <= snapshot.index {
            resolve(apps[number].waiters[group].removeValue(forKey: index)!, .lost, at: number, in: &context)
        }
    }

    private func snapshotData(_ group: Int, _ number: Int) -> String {
        group == jobGroup ? apps[number].jobMachine.snapshot() : apps[number].shardMachines[group].snapshot()
    }

    private mutating func statusChanged(_ group: Int, _ status: RaftStatus, at number: Int, in context: inout SimulationContext<Self>) {
        if status.role == .candidate { campaigns.append(context.now) }
        if status.role != .leader {
            // Only a leader has waiters; one that stepped down cannot tell (`RaftGroupRunner`).
            for index in apps[number].waiters[group].keys.sorted() {
                resolve(apps[number].waiters[group].removeValue(forKey: index)!, .lost, at: number, in: &context)
            }
        }
        guard group == jobGroup else { return }
        if let coordinator = apps[number].coordinator, status.role != .leader || status.term != coordinator.term {
            if coordinator.phase != .done {
                coordinatorsLost += 1
                coordinator.ledger?.abandonRecording()
            }
            apps[number].coordinator = nil
            context.note("\(nodes[number]) stops coordinating (term \(coordinator.term), epoch \(coordinator.epoch))")
        }
        if status.role == .leader, apps[number].leadingTerm != status.term {
            apps[number].leadingTerm = status.term
            apps[number].roundGeneration += 1
            context.schedule(.round(generation: apps[number].roundGeneration), after: context.random.uniform(in: options.round))
        }
    }

    // MARK: - Removing finished groups (`JobGroups.watch`)

    /// Every 0.25 s: a group finished here for `finishedGroupLingers` (its leader 2 s
    /// more) is removed; one without an alive leader for 5 s is removed if a replica it
    /// can reach removed it.
    private mutating func watchGroups(_ number: Int, in context: inout SimulationContext<Self>) {
        guard let lingers = options.finishedGroupLingers else { return }
        let now = context.now
        let heard = apps[number].lastHeard
        let suspectAfter = options.suspectAfter
        let alive = { (other: Int) in other == number || now - (heard[other] ?? -100) <= suspectAfter }
        for group in rafts.indices where holds[group][number] && !removed[group][number] {
            guard let replica = shells[group][number].replica else { continue }
            let finished = group == jobGroup ? apps[number].jobMachine.finished : apps[number].shardMachines[group].finished
            if finished {
                let since = apps[number].doneSince[group] ?? now
                apps[number].doneSince[group] = since
                if now - since >= lingers + (replica.role == .leader ? 2 : 0) { remove(group, at: number, why: "it is finished", in: &context) }
                continue
            }
            apps[number].doneSince[group] = nil
            let leaderAlive = replica.leader.flatMap { numbers[$0] }.map(alive) ?? false
            guard replica.role != .leader, !leaderAlive else {
                apps[number].leaderlessSince[group] = nil
                continue
            }
            let since = apps[number].leaderlessSince[group] ?? now
            apps[number].leaderlessSince[group] = since
            guard now - since >= 5 else { continue }
            apps[number].leaderlessSince[group] = now
            if nodes.indices.contains(where: { $0 != number && holds[group][$0] && removed[group][$0] && alive($0) }) {
                remove(group, at: number, why: "another replica removed it", in: &context)
            }
        }
    }

    private mutating func remove(_ group: Int, at number: Int, why: String, in context: inout SimulationContext<Self>) {
        removed[group][number] = true
        shells[group][number].driver = nil
        shells[group][number].tickGeneration += 1
        for index in apps[number].waiters[group].keys.sorted() {
            resolve(apps[number].waiters[group].removeValue(forKey: index)!, .lost, at: number, in: &context)
        }
        context.note("\(nodes[number]) removes its replica of \(groupName(group)): \(why)")
    }

    // MARK: - The groups' shells (as `RaftShellModel`, one shell per group and node)

    private mutating func startReplica(_ group: Int, _ number: Int, in context: inout SimulationContext<Self>) {
        guard holds[group][number], let configuration else { return }
        let node = nodes[number]
        var shell = RaftShell(disk: shells[group][number].disk)
        let every = options.compactEvery.map { context.random.integer(in: $0) } ?? .max
        do {
            let replica = try RaftReplica(id: node, group: rafts[group], state: shell.disk.durable, configuration: configuration, seed: context.random.next())
            shell.driver = RaftDriver(replica: replica, compactEvery: every)
        } catch {
            invariants[group].storageFailed(node, .inconsistent(file: "\(node)/g\(group)/log", reason: "\(error)"))
            return noteRaftViolation(group)
        }
        shell.tickGeneration = shells[group][number].tickGeneration + 1
        shells[group][number] = shell
        invariants[group].restarted(node)
        runReplica(group, number, shells[group][number].driver!.start(now: context.now), in: &context)
        // As the runner's timer task: its first tick right away, then when the driver says.
        context.schedule(.tick(group: group, generation: shell.tickGeneration), after: 0)
    }

    private mutating func crashReplica(_ group: Int, _ number: Int, in context: inout SimulationContext<Self>) -> SimulatedRaftDisk.CrashOutcome? {
        guard holds[group][number] else { return nil }
        var shell = shells[group][number]
        let node = nodes[number]
        var outcome: SimulatedRaftDisk.CrashOutcome?
        do {
            outcome = try shell.disk.crash(inFlight: shell.driver?.flushing?.writes ?? [], random: &context.random)
            context.note("\(node) g\(group) crashed: \(outcome!)")
        } catch {
            invariants[group].storageFailed(node, error)
        }
        var crashed = RaftShell(disk: shell.disk)
        crashed.tickGeneration = shell.tickGeneration + 1
        shells[group][number] = crashed
        invariants[group].crashed(node, disks: Dictionary(uniqueKeysWithValues: shells[group].indices.filter { holds[group][$0] }.map { (nodes[$0], shells[group][$0].disk.durable) }))
        noteRaftViolation(group)
        return outcome
    }

    /// Performs a driver's effects (as `RaftShellModel.runReplica` does, per group).
    private mutating func runReplica(_ group: Int, _ number: Int, _ effects: [RaftDriver.Effect], in context: inout SimulationContext<Self>) {
        guard shells[group][number].driver != nil else { return }
        let node = nodes[number]
        for effect in effects {
            switch effect {
            case .wrote(let write):
                invariants[group].wrote(node, write, replica: shells[group][number].replica!)
            case .flush(let batch, _):
                context.schedule(.flushed(group: group, batch: batch), after: context.random.uniform(in: options.diskLatency))
            case .send(let receiver, let messages):
                for message in messages {
                    invariants[group].sent(node, to: receiver, message)
                    context.send(.raft(group: group, message), to: receiver)
                }
            case .apply(let entries):
                invariants[group].applied(node, entries, term: shells[group][number].replica!.term)
                applyEntries(group, entries, at: number, in: &context)
            case .applySnapshot(let snapshot):
                invariants[group].appliedSnapshot(node, snapshot)
                restoreSnapshot(group, snapshot, at: number, in: &context)
            case .stateChanged(let status):
                context.note("\(node) g\(group) is \(status)")
                invariants[group].statusChanged(node, status, replica: shells[group][number].replica!, now: context.now)
                statusChanged(group, status, at: number, in: &context)
            }
        }
        if shells[group][number].driver?.compactionDue == true {
            let data = snapshotData(group, number)
            if let compaction = shells[group][number].driver?.compactIfDue(snapshot: { data }), !compaction.isEmpty {
                runReplica(group, number, compaction, in: &context)
            }
        }
        noteRaftViolation(group)
    }

    private mutating func flushed(_ group: Int, _ number: Int, batch: Int, in context: inout SimulationContext<Self>) {
        guard let flushing = shells[group][number].driver?.flushing, flushing.batch == batch else { return }
        shells[group][number].disk.commit(flushing.writes)
        let last = shells[group][number].disk.durable.lastPosition
        runReplica(group, number, shells[group][number].driver!.flushed(batch: batch, through: last, now: context.now), in: &context)
    }
}
