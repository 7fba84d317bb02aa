import SpokesConsensus

/// One Raft group in the simulator: replicas `n1`...`nN`, each a `RaftReplica` inside a
/// `RaftShell` that keeps `RaftAction`'s contract (sends held until the writes before them
/// are flushed, group commit, `persisted` after each flush) over a `SimulatedRaftDisk`,
/// and clients `c1`... that propose commands with retries. `RaftInvariants` checks safety
/// at every event; `finalViolation` checks liveness after the faults heal. With
/// `changeReplicas`, a spare replica `n(N+1)` runs too, and `c1` also asks the leader, every
/// 0.3-1.5 s, to remove a replica (itself included) or to add one that is out, keeping
/// between N-1 and N: the group's single-server changes under the same faults.
public struct RaftClusterModel: RaftShellModel {
    public struct Options: Sendable, Hashable {
        public var replicas: Int
        public var configuration: RaftConfiguration
        /// Draw each run's batching (entries per message, messages in flight) from the
        /// seed, so some runs split every batch: elections then meet logs that differ
        /// entry by entry.
        public var varyBatching: Bool
        /// Bootstrap with `n1` as the first leader (otherwise the group elects one).
        public var firstLeader: Bool
        public var clients: Int
        /// Each replica compacts its log once this many entries were applied since its
        /// last snapshot (drawn per replica from the range), nil: never.
        public var compactEvery: ClosedRange<Int>?
        /// How long a flush (write and fdatasync) takes.
        public var diskLatency: ClosedRange<Double>
        /// A client that hears nothing for this long tries another replica.
        public var clientTimeout: Double
        /// After the last fault ends, a command first proposed then must be acknowledged
        /// within this many seconds; clients stop proposing after it, and every replica
        /// must have applied the same commands by the end of the run.
        public var livenessBound: Double
        /// Break `RaftAction`'s contract on purpose: send at once instead of after the
        /// writes before the send are durable. Exists to show that the invariants catch a
        /// shell that does (votes and acknowledgements a crash can take back).
        public var sendBeforePersist = false
        /// Change the group's replicas while it runs (see the type's comment).
        public var changeReplicas = false

        public init(replicas: Int, configuration: RaftConfiguration = RaftConfiguration(), varyBatching: Bool = true, firstLeader: Bool = true, clients: Int = 2, compactEvery: ClosedRange<Int>? = 10...40, diskLatency: ClosedRange<Double> = 0.0002...0.003, clientTimeout: Double = 1, livenessBound: Double = 5) {
            self.replicas = replicas
            self.configuration = configuration
            self.varyBatching = varyBatching
            self.firstLeader = firstLeader
            self.clients = clients
            self.compactEvery = compactEvery
            self.diskLatency = diskLatency
            self.clientTimeout = clientTimeout
            self.livenessBound = livenessBound
        }
    }

    public enum Message: SimulationTraceable, Sendable {
        case raft(RaftMessage)
        case request(command: String)
        case committed(command: String)
        /// Not the leader (or the entry was lost to a change of leader): try `leader`.
        case redirect(command: String, leader: String?)
        /// From `c1` to a replica it takes for the leader: make these the replicas.
        case changeReplicas([String])

        public var description: String {
            switch self {
            case .raft(let message): message.description
            case .request(let command): "request \(command)"
            case .committed(let command): "committed \(command)"
            case .redirect(let command, let leader): "redirect \(command) to \(leader ?? "-")"
            case .changeReplicas(let replicas): "change the replicas to \(replicas.joined(separator: ","))"
            }
        }

        public func trace(into hasher: inout TraceHasher) {
            switch self {
            case .raft(let message): message.trace(into: &hasher)
            case .request(let command): hasher.combine(101); hasher.combine(command)
            case .committed(let command): hasher.combine(102); hasher.combine(command)
            case .redirect(let command, let leader): hasher.combine(103); hasher.combine(command); hasher.combine(leader ?? "")
            case .changeReplicas(let replicas): hasher.combine(104); for name in replicas { hasher.combine(name) }
            }
        }
    }

    public enum Timer: SimulationTraceable, Sendable {
        case tick(generation: Int)
        case flushed(batch: Int)
        case clientSend
        case clientTimeout(attempt: Int)
        case clientBackoff(attempt: Int)
        case reconfigure

        public var description: String {
            switch self {
            case .tick(let generation): "tick #\(generation)"
            case .flushed(let batch): "flush done through write \(batch)"
            case .clientSend: "next command"
            case .clientTimeout(let attempt): "timeout of attempt \(attempt)"
            case .clientBackoff(let attempt): "retry as attempt \(attempt)"
            case .reconfigure: "change the replicas"
            }
        }

        public func trace(into hasher: inout TraceHasher) {
            switch self {
            case .tick(let generation): hasher.combine(201); hasher.combine(generation)
            case .flushed(let batch): hasher.combine(202); hasher.combine(batch)
            case .clientSend: hasher.combine(203)
            case .clientTimeout(let attempt): hasher.combine(204); hasher.combine(attempt)
            case .clientBackoff(let attempt): hasher.combine(205); hasher.combine(attempt)
            case .reconfigure: hasher.combine(206)
            }
        }
    }

    /// What a replica's application keeps: its state machine, and the client of each
    /// command it proposed, by log index.
    struct Application {
        var machine = SimulatedStateMachine()
        var proposals: [Int: (term: Int, command: String, client: String)] = [:]
    }

    struct Client {
        var counter = 0
        var target = 0
        var outstanding: (command: String, attempt: Int, firstSent: Double)?
        var stopped = false
    }

    public let nodes: [String]
    public let replicaNames: [String]
    public var faultableNodes: [String] { replicaNames }
    public var faultRoles: [String] { ["@leader"] }
    public let options: Options
    /// The replicas' configuration, drawn at the first start when batching varies.
    public private(set) var configuration: RaftConfiguration?
    let group: RaftGroup
    /// The spare's group: every replica name, so that it is one of them.
    let spareGroup: RaftGroup
    /// Replicas' shells and applications by number (`n1` is 0).
    var shells: [RaftShell] = []
    var applications: [Application] = []
    var clients: [String: Client] = [:]
    let shellNumbers: [String: Int]
    public internal(set) var invariants: RaftInvariants
    public private(set) var healedAt: Double?

    public init(options: Options) {
        self.options = options
        let count = max(1, options.replicas)
        replicaNames = (1...(count + (options.changeReplicas ? 1 : 0))).map { "n\($0)" }
        let clientNames = (0..<max(options.clients, options.changeReplicas ? 1 : 0)).map { "c\($0 + 1)" }
        nodes = replicaNames + clientNames
        // Names are generated: never empty, never repeated.
        group = try! RaftGroup(replicas: Array(replicaNames.prefix(count)), firstLeader: options.firstLeader ? "n1" : nil)
        spareGroup = try! RaftGroup(replicas: replicaNames)
        invariants = RaftInvariants(group: group)
        shells = replicaNames.map { _ in RaftShell() }
        applications = replicaNames.map { _ in Application() }
        shellNumbers = Dictionary(uniqueKeysWithValues: replicaNames.enumerated().map { ($0.element, $0.offset) })
        for name in clientNames { clients[name] = Client() }
    }

    public var violation: String? { invariants.violation }

    func definition(of node: String) -> RaftGroup { group.replicas.contains(node) ? group : spareGroup }

    /// "@leader": the running replica that leads the highest term.
    public func node(playing role: String) -> String? {
        guard role == "@leader" else { return nil }
        return replicaNames
            .compactMap { name in shells[shellNumbers[name]!].replica.flatMap { $0.role == .leader ? (name, $0.term) : nil } }
            .max { $0.1 < $1.1 }?.0
    }

    // MARK: - Events

    public mutating func start(_ node: String, in context: inout SimulationContext<Self>) {
        if clients[node] != nil {
            if options.changeReplicas, node == "c1" { context.schedule(.reconfigure, after: context.random.uniform(in: 0.3...1.5)) }
            return context.schedule(.clientSend, after: context.random.uniform(in: 0.05...0.3))
        }
        guard let number = shellNumbers[node] else { return }
        if configuration == nil {
            var drawn = options.configuration
            if options.varyBatching {
                drawn.maxEntriesPerMessage = context.random.element(of: [1, 2, 3, 8, 512])
                drawn.maxMessagesInFlight = context.random.element(of: [1, 2, 8])
            }
            configuration = drawn
        }
        applications[number] = Application()
        startReplica(node, configuration: configuration!, compactEvery: options.compactEvery, in: &context)
    }

    public mutating func receive(_ message: Message, from sender: String, at node: String, in context: inout SimulationContext<Self>) {
        switch message {
        case .raft(let raft):
            receiveRaft(raft, from: sender, at: node, in: &context)
        case .request(let command):
            guard let number = shellNumbers[node], let (proposal, actions) = shells[number].driver?.propose([command], now: context.now) else { return }
            switch proposal {
            case .accepted(let term, let indices):
                applications[number].proposals[indices.lowerBound] = (term, command, sender)
            case .notLeader(let hint):
                context.send(.redirect(command: command, leader: hint), to: sender)
            }
            runReplica(node, actions, in: &context)
        case .committed(let command):
            guard var client = clients[node], let outstanding = client.outstanding, outstanding.command == command else { return }
            invariants.acknowledged(command, firstSent: outstanding.firstSent, now: context.now)
            client.outstanding = nil
            clients[node] = client
            context.schedule(.clientSend, after: context.random.uniform(in: 0.02...0.2))
        case .changeReplicas(let replicas):
            guard let number = shellNumbers[node], let driver = shells[number].driver else { return }
            var changing = driver
            guard let (_, actions) = try? changing.proposeReplicas(replicas, now: context.now) else { return }
            shells[number].driver = changing
            runReplica(node, actions, in: &context)
        case .redirect(let command, let leader):
            guard var client = clients[node], var outstanding = client.outstanding, outstanding.command == command else { return }
            client.target = leader.flatMap { replicaNames.firstIndex(of: $0) } ?? (client.target + 1) % replicaNames.count
            outstanding.attempt += 1
            client.outstanding = outstanding
            clients[node] = client
            context.schedule(.clientBackoff(attempt: outstanding.attempt), after: 0.05)
        }
    }

    public mutating func fire(_ timer: Timer, at node: String, in context: inout SimulationContext<Self>) {
        switch timer {
        case .tick(let generation):
            tickReplica(node, generation: generation, in: &context)
        case .flushed(let batch):
            flushed(node, batch: batch, in: &context)
        case .clientSend:
            guard var client = clients[node], client.outstanding == nil, !client.stopped else { return }
            if let healedAt, context.now > healedAt + options.livenessBound {
                client.stopped = true
                clients[node] = client
                return
            }
            client.counter += 1
            client.outstanding = ("\(node)-\(client.counter)", 1, context.now)
            clients[node] = client
            sendOutstanding(node, in: &context)
        case .clientTimeout(let attempt):
            guard var client = clients[node], var outstanding = client.outstanding, outstanding.attempt == attempt else { return }
            client.target = (client.target + 1) % replicaNames.count
            outstanding.attempt += 1
            client.outstanding = outstanding
            clients[node] = client
            sendOutstanding(node, in: &context)
        case .clientBackoff(let attempt):
            guard clients[node]?.outstanding?.attempt == attempt else { return }
            sendOutstanding(node, in: &context)
        case .reconfigure:
            // Asks the leader of the highest term it can see (an operator's view), if any.
            if let healedAt, context.now > healedAt + options.livenessBound / 2 { return }
            context.schedule(.reconfigure, after: context.random.uniform(in: 0.3...1.5))
            guard let leader = self.node(playing: "@leader"), let replicas = shells[shellNumbers[leader]!].replica?.replicas else { return }
            let count = group.replicas.count
            var next = replicas
            if replicas.count >= count {
                next.remove(at: context.random.integer(in: 0...(replicas.count - 1)))
            } else {
                let out = replicaNames.filter { !replicas.contains($0) }
                guard !out.isEmpty else { return }
                next = (replicas + [out[context.random.integer(in: 0...(out.count - 1))]]).sorted()
            }
            context.send(.changeReplicas(next), to: leader)
        }
    }

    public mutating func crash(_ node: String, in context: inout SimulationContext<Self>) {
        guard let number = shellNumbers[node] else { return }
        crashReplica(node, in: &context)
        applications[number] = Application()
    }

    public mutating func healed(in context: inout SimulationContext<Self>) {
        healedAt = context.now
    }

    public func finalViolation(now: Double) -> String? {
        guard let healedAt else { return "the faults never healed" }
        let bound = healedAt + options.livenessBound
        guard let first = invariants.acknowledgements.first(where: { $0.firstSent >= healedAt }), first.time <= bound else {
            return "liveness: no command proposed after the faults healed at \(fixed(healedAt, 3))s was acknowledged by \(fixed(bound, 3))s"
        }
        // The replicas of the last configuration committed (all of them without changes).
        let members = invariants.committedReplicas
        let named = zip(replicaNames, applications.map(\.machine)).filter { members.contains($0.0) }
        let machines = named.map(\.1)
        guard let reference = machines.first, machines.allSatisfy({ $0 == reference }) else {
            let applied = named.map { "\($0.0) applied \($0.1.appliedIndex)" }.joined(separator: ", ")
            return "liveness: replicas differ at the end: \(applied)"
        }
        let order = Set(reference.order)
        if let missing = invariants.acknowledgements.first(where: { !order.contains($0.command) }) {
            return "acknowledged command \(missing.command) is not in the replicas' state"
        }
        return nil
    }

    /// Seconds from the end of the faults to the first acknowledgement of a command
    /// proposed after it.
    public var recoveryTime: Double? {
        guard let healedAt, let first = invariants.acknowledgements.first(where: { $0.firstSent >= healedAt }) else { return nil }
        return first.time - healedAt
    }

    // MARK: - The shell

    var diskLatency: ClosedRange<Double> { options.diskLatency }
    var sendsBeforePersisting: Bool { options.sendBeforePersist }
    static func raftMessage(_ message: RaftMessage) -> Message { .raft(message) }
    static func tickTimer(generation: Int) -> Timer { .tick(generation: generation) }
    static func flushTimer(batch: Int) -> Timer { .flushed(batch: batch) }

    mutating func applyEntries(_ entries: [RaftEntry], at node: String, number: Int, in context: inout SimulationContext<Self>) {
        for entry in entries {
            applications[number].machine.apply(entry)
            if let proposal = applications[number].proposals.removeValue(forKey: entry.index) {
                let won = entry.term == proposal.term && entry.command == proposal.command
                context.send(won ? .committed(command: proposal.command) : .redirect(command: proposal.command, leader: nil), to: proposal.client)
            }
        }
    }

    mutating func restoreSnapshot(_ snapshot: RaftSnapshot, at node: String, number: Int, in context: inout SimulationContext<Self>) {
        if SimulatedStateMachine.order(from: snapshot.data) != SimulatedStateMachine.order(of: invariants.committed.prefix(snapshot.index)) {
            invariants.snapshotDiffers(node, snapshot)
        }
        applications[number].machine.restore(snapshot)
        applications[number].proposals = applications[number].proposals.filter { $0.key > snapshot.index }
    }

    func snapshotData(of number: Int) -> String { applications[number].machine.snapshotData }

    private mutating func sendOutstanding(_ node: String, in context: inout SimulationContext<Self>) {
        guard let client = clients[node], let outstanding = client.outstanding else { return }
        context.send(.request(command: outstanding.command), to: replicaNames[client.target])
        context.schedule(.clientTimeout(attempt: outstanding.attempt), after: options.clientTimeout)
    }
}
