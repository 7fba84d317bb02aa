import SpokesConsensus

/// What the simulator keeps around one `RaftReplica`: its disk, the writes issued and
/// flushed, the sends held until the writes before them are durable, and its one pending
/// tick. A crash keeps only the disk.
struct RaftShell {
    var replica: RaftReplica?
    var disk = SimulatedRaftDisk()
    /// Compact the log once this many entries were applied since the last snapshot.
    var compactEvery = Int.max
    var issued = 0
    var durable = 0
    var unflushed: [RaftWrite] = []
    var flushing: (batch: Int, writes: [RaftWrite])?
    var held: [(after: Int, to: String, message: RaftMessage)] = []
    var tickGeneration = 0
    var tickAt: Double?

    init(disk: SimulatedRaftDisk = SimulatedRaftDisk()) {
        self.disk = disk
    }
}

/// A model whose group of replicas runs in `RaftShell`s, keeping `RaftAction`'s contract
/// (sends held until the writes before them are flushed, group commit, `persisted` after
/// each flush, compaction every `compactEvery` applied entries), with `RaftInvariants`
/// watching every write, vote, application and election. The model supplies its state
/// machine through the hooks (`applyEntries`, `restoreSnapshot`, `snapshotData`) and
/// wraps Raft's messages and the shell's timers in its own types.
protocol RaftShellModel: SimulationModel {
    /// The replicas' shells, by number (an array, so reading a field copies no shell).
    var shells: [RaftShell] { get set }
    var shellNumbers: [String: Int] { get }
    var group: RaftGroup { get }
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

    /// Starts replica `node` (again) from what its disk holds: a fresh shell, a
    /// compaction interval drawn from `compactEvery`, a new replica seeded from the run.
    mutating func startReplica(_ node: String, configuration: RaftConfiguration, compactEvery: ClosedRange<Int>?, in context: inout SimulationContext<Self>) {
        guard let number = shellNumbers[node] else { return }
        var shell = RaftShell(disk: shells[number].disk)
        if let range = compactEvery { shell.compactEvery = context.random.integer(in: range) }
        do {
            shell.replica = try RaftReplica(id: node, group: group, state: shell.disk.durable, configuration: configuration, seed: context.random.next())
        } catch {
            return invariants.storageFailed(node, .inconsistent(file: "\(node)/log", reason: "\(error)"))
        }
        shells[number] = shell
        invariants.restarted(node)
        runReplica(node, shells[number].replica!.start(now: context.now), in: &context)
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
            outcome = try shell.disk.crash(inFlight: shell.flushing?.writes ?? [], random: &context.random)
            context.note("\(node) crashed: \(outcome!)")
        } catch {
            invariants.storageFailed(node, error)
        }
        shells[number] = RaftShell(disk: shell.disk)
        invariants.crashed(node, disks: shells.map(\.disk.durable))
        return outcome
    }

    /// A Raft message for replica `node`.
    mutating func receiveRaft(_ message: RaftMessage, from sender: String, at node: String, in context: inout SimulationContext<Self>) {
        guard let number = shellNumbers[node], let actions = shells[number].replica?.receive(message, from: sender, now: context.now) else { return }
        runReplica(node, actions, in: &context)
    }

    /// Replica `node`'s tick timer fired (only its latest one counts).
    mutating func tickReplica(_ node: String, generation: Int, in context: inout SimulationContext<Self>) {
        guard let number = shellNumbers[node], shells[number].tickGeneration == generation, let actions = shells[number].replica?.tick(now: context.now) else { return }
        shells[number].tickAt = nil
        runReplica(node, actions, in: &context)
    }

    /// Carries out a replica's actions under `RaftAction`'s contract.
    mutating func runReplica(_ node: String, _ actions: [RaftAction], in context: inout SimulationContext<Self>) {
        guard let number = shellNumbers[node], shells[number].replica != nil else { return }
        for action in actions {
            switch action {
            case .persist(let write):
                invariants.wrote(node, write, replica: shells[number].replica!)
                shells[number].issued += 1
                shells[number].unflushed.append(write)
            case .send(let receiver, let message):
                if shells[number].durable >= shells[number].issued || sendsBeforePersisting {
                    transmit(message, from: node, to: receiver, in: &context)
                } else {
                    shells[number].held.append((shells[number].issued, receiver, message))
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
        startFlush(node, in: &context)
        if let replica = shells[number].replica, replica.appliedIndex - replica.snapshotPosition.index >= shells[number].compactEvery,
           let actions = try? shells[number].replica!.compact(through: replica.appliedIndex, snapshot: snapshotData(of: number)) {
            runReplica(node, actions, in: &context)
        }
        scheduleTick(node, in: &context)
    }

    private mutating func transmit(_ message: RaftMessage, from node: String, to receiver: String, in context: inout SimulationContext<Self>) {
        invariants.sent(node, to: receiver, message)
        context.send(Self.raftMessage(message), to: receiver)
    }

    /// Group commit: one flush at a time takes every write issued so far.
    private mutating func startFlush(_ node: String, in context: inout SimulationContext<Self>) {
        let number = shellNumbers[node]!
        guard shells[number].flushing == nil, !shells[number].unflushed.isEmpty else { return }
        let batch = shells[number].issued
        shells[number].flushing = (batch, shells[number].unflushed)
        shells[number].unflushed = []
        context.schedule(Self.flushTimer(batch: batch), after: context.random.uniform(in: diskLatency))
    }

    /// Replica `node`'s flush through write `batch` finished: the writes are durable, the
    /// sends behind them go out, and the replica hears what is persisted.
    mutating func flushed(_ node: String, batch: Int, in context: inout SimulationContext<Self>) {
        guard let number = shellNumbers[node], let flushing = shells[number].flushing, flushing.batch == batch else { return }
        shells[number].disk.commit(flushing.writes)
        shells[number].flushing = nil
        shells[number].durable = batch
        let ready = shells[number].held.prefix { $0.after <= batch }
        shells[number].held.removeFirst(ready.count)
        for send in ready { transmit(send.message, from: node, to: send.to, in: &context) }
        let last = shells[number].disk.durable.lastPosition
        runReplica(node, shells[number].replica!.persisted(through: last.index, term: last.term, now: context.now), in: &context)
    }

    /// One pending tick per replica, at its next deadline.
    private mutating func scheduleTick(_ node: String, in context: inout SimulationContext<Self>) {
        guard let number = shellNumbers[node], let deadline = shells[number].replica?.nextDeadline else { return }
        if let pending = shells[number].tickAt, pending <= deadline + 1e-9 { return }
        shells[number].tickGeneration += 1
        shells[number].tickAt = deadline
        context.schedule(Self.tickTimer(generation: shells[number].tickGeneration), after: deadline - context.now)
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
