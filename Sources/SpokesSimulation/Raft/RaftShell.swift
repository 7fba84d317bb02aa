import SpokesConsensus

/// What the simulator keeps around one replica: the node's own `RaftDriver` (the
/// contract `RaftGroupRunner` ships with), its disk, and its timer's generation. A crash
/// keeps only the disk.
struct RaftShell {
    var driver: RaftDriver?
    var disk = SimulatedRaftDisk()
    var tickGeneration = 0

    var replica: RaftReplica? { driver?.replica }

    init(disk: SimulatedRaftDisk = SimulatedRaftDisk()) {
        self.disk = disk
    }
}

/// A model whose group of replicas runs in `RaftShell`s: each replica's `RaftDriver`
/// decides what is sent, flushed and applied, as on a node; the model performs its
/// effects on the simulated network and disk (a flush takes `diskLatency`), ticks it as
/// `RaftGroupRunner` does (`RaftDriver.nextTick(after:)`), and lets `RaftInvariants`
/// watch every write, vote, application and election. The model supplies its state
/// machine through the hooks (`applyEntries`, `restoreSnapshot`, `snapshotData`) and
/// wraps Raft's messages and the shell's timers in its own types.
protocol RaftShellModel: SimulationModel {
    /// The replicas' shells, by number (an array, so reading a field copies no shell).
    var shells: [RaftShell] { get set }
    var shellNumbers: [String: Int] { get }
    var group: RaftGroup { get }
    /// The group as replica `node` was given it (a spare added later is given one that
    /// names it); `group` unless the model says otherwise.
    func definition(of node: String) -> RaftGroup
    var invariants: RaftInvariants { get set }
    /// How long a flush (write and fdatasync) takes.
    var diskLatency: ClosedRange<Double> { get }
    /// Breaks the contract on purpose: sends go out before the writes before them are durable.
    var sendsBeforePersisting: Bool { get }

    static func raftMessage(_ message: RaftMessage) -> Message
    static func tickTimer(generation: Int) -> Timer
    static func flushTimer(batch: Int) -> Timer

    /// Committed entries for replica `number`'s state machine, in order.
    mutating func applyEntries(_ entries: [RaftEntry], at node: String, number: Int, in context: inout SimulationContext<Self>)
    /// Replica `number`'s state machine is replaced by `snapshot` (`RaftInvariants` has
    /// checked its position; the model checks its state).
    mutating func restoreSnapshot(_ snapshot: RaftSnapshot, at node: String, number: Int, in context: inout SimulationContext<Self>)
    /// Replica `number`'s state machine as a snapshot, for compaction.
    func snapshotData(of number: Int) -> String
    mutating func statusChanged(_ status: RaftStatus, at node: String, number: Int, in context: inout SimulationContext<Self>)
}

extension RaftShellModel {
    mutating func statusChanged(_ status: RaftStatus, at node: String, number: Int, in context: inout SimulationContext<Self>) {}

    func definition(of node: String) -> RaftGroup { group }

    /// Starts replica `node` (again) from what its disk holds: a fresh shell, a
    /// compaction interval drawn from `compactEvery`, a new replica seeded from the run.
    mutating func startReplica(_ node: String, configuration: RaftConfiguration, compactEvery: ClosedRange<Int>?, in context: inout SimulationContext<Self>) {
        guard let number = shellNumbers[node] else { return }
        var shell = RaftShell(disk: shells[number].disk)
        let every = compactEvery.map { context.random.integer(in: $0) } ?? .max
        do {
            let replica = try RaftReplica(id: node, group: definition(of: node), state: shell.disk.durable, configuration: configuration, seed: context.random.next())
            shell.driver = RaftDriver(replica: replica, compactEvery: every)
            shell.driver!.sendsBeforePersisting = sendsBeforePersisting
        } catch {
            return invariants.storageFailed(node, .inconsistent(file: "\(node)/log", reason: "\(error)"))
        }
        shell.tickGeneration = shells[number].tickGeneration + 1
        shells[number] = shell
        invariants.restarted(node)
        runReplica(node, shells[number].driver!.start(now: context.now), in: &context)
        // As the runner's timer task: its first tick right away, then when the driver says.
        context.schedule(Self.tickTimer(generation: shells[number].tickGeneration), after: 0)
    }

    /// Replica `node` crashed: what its flush in progress left on disk is drawn (nothing,
    /// a torn record, or all of it), the disk is recovered as `RaftStorage` would, and
    /// everything else is dropped. Returns what happened to the disk (nil when it could
    /// not be recovered, a violation).
    @discardableResult
    mutating func crashReplica(_ node: String, in context: inout SimulationContext<Self>) -> SimulatedRaftDisk.CrashOutcome? {
        guard let number = shellNumbers[node] else { return nil }
        var shell = shells[number]
        var outcome: SimulatedRaftDisk.CrashOutcome?
        do {
            outcome = try shell.disk.crash(inFlight: shell.driver?.flushing?.writes ?? [], random: &context.random)
            context.note("\(node) crashed: \(outcome!)")
        } catch {
            invariants.storageFailed(node, error)
        }
        var crashed = RaftShell(disk: shell.disk)
        crashed.tickGeneration = shell.tickGeneration + 1
        shells[number] = crashed
        invariants.crashed(node, disks: Dictionary(uniqueKeysWithValues: shellNumbers.map { ($0.key, shells[$0.value].disk.durable) }))
        return outcome
    }

    /// A Raft message for replica `node`.
    mutating func receiveRaft(_ message: RaftMessage, from sender: String, at node: String, in context: inout SimulationContext<Self>) {
        guard let number = shellNumbers[node], let effects = shells[number].driver?.receive(message, from: sender, now: context.now) else { return }
        runReplica(node, effects, in: &context)
    }

    /// Replica `node`'s tick timer fired (only its current incarnation's counts): the
    /// driver ticks and says when the next tick is due.
    mutating func tickReplica(_ node: String, generation: Int, in context: inout SimulationContext<Self>) {
        guard let number = shellNumbers[node], shells[number].tickGeneration == generation,
              let effects = shells[number].driver?.tick(now: context.now) else { return }
        runReplica(node, effects, in: &context)
        guard let next = shells[number].driver?.nextTick(after: context.now) else { return }
        context.schedule(Self.tickTimer(generation: generation), after: next)
    }

    /// Performs a driver's effects: on the simulated network and disk, under the checker.
    mutating func runReplica(_ node: String, _ effects: [RaftDriver.Effect], in context: inout SimulationContext<Self>) {
        guard let number = shellNumbers[node], shells[number].driver != nil else { return }
        for effect in effects {
            switch effect {
            case .wrote(let write):
                invariants.wrote(node, write, replica: shells[number].replica!)
            case .flush(let batch, _):
                context.schedule(Self.flushTimer(batch: batch), after: context.random.uniform(in: diskLatency))
            case .send(let receiver, let messages):
                for message in messages {
                    invariants.sent(node, to: receiver, message)
                    context.send(Self.raftMessage(message), to: receiver)
                }
            case .apply(let entries):
                invariants.applied(node, entries, term: shells[number].replica!.term)
                applyEntries(entries, at: node, number: number, in: &context)
            case .applySnapshot(let snapshot):
                invariants.appliedSnapshot(node, snapshot)
                restoreSnapshot(snapshot, at: node, number: number, in: &context)
            case .stateChanged(let status):
                context.note("\(node) is \(status)")
                invariants.statusChanged(node, status, replica: shells[number].replica!, now: context.now)
                statusChanged(status, at: node, number: number, in: &context)
            }
        }
        guard shells[number].driver?.compactionDue == true else { return }
        let data = snapshotData(of: number)
        guard let compaction = shells[number].driver?.compactIfDue(snapshot: { data }), !compaction.isEmpty else { return }
        runReplica(node, compaction, in: &context)
    }

    /// Replica `node`'s flush through write `batch` finished: the writes are durable, and
    /// the driver releases the sends behind them.
    mutating func flushed(_ node: String, batch: Int, in context: inout SimulationContext<Self>) {
        guard let number = shellNumbers[node], let flushing = shells[number].driver?.flushing, flushing.batch == batch else { return }
        shells[number].disk.commit(flushing.writes)
        let last = shells[number].disk.durable.lastPosition
        runReplica(node, shells[number].driver!.flushed(batch: batch, through: last, now: context.now), in: &context)
    }
}

extension RaftMessage: SimulationTraceable {
    public func trace(into hasher: inout TraceHasher) {
        hasher.combine(kind)
        hasher.combine(term)
        switch self {
        case .preVote(let request), .requestVote(let request):
            hasher.combine(request.last.index)
            hasher.combine(request.last.term)
        case .preVoteResponse(let response), .requestVoteResponse(let response):
            hasher.combine(response.granted)
        case .appendEntries(let append):
            hasher.combine(append.previous.index)
            hasher.combine(append.previous.term)
            hasher.combine(append.entries.count)
            hasher.combine(append.commit)
        case .appendEntriesResponse(let response):
            hasher.combine(response.success)
            hasher.combine(response.matchIndex)
            hasher.combine(response.rejectedIndex)
        case .installSnapshot(let install):
            hasher.combine(install.snapshot.index)
        case .heartbeat(let heartbeat):
            hasher.combine(heartbeat.commit)
        case .heartbeatResponse, .timeoutNow:
            break
        }
    }
}
