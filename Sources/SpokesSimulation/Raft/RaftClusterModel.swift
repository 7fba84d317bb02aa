import SpokesConsensus

/// One Raft group in the simulator: replicas `n1`...`nN`, each a `RaftReplica` inside a
/// shell that keeps `RaftAction`'s contract (sends held until the writes before them are
/// flushed, group commit, `persisted` after each flush) over a `SimulatedRaftDisk`, and
/// clients `c1`... that propose commands with retries. `RaftInvariants` checks safety
/// at every event; `finalViolation` checks liveness after the faults heal.
public struct RaftClusterModel: SimulationModel {
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

        public var description: String {
            switch self {
            case .raft(let message): message.description
            case .request(let command): "request \(command)"
            case .committed(let command): "committed \(command)"
            case .redirect(let command, let leader): "redirect \(command) to \(leader ?? "-")"
            }
        }

        public func trace(into hasher: inout TraceHasher) {
            switch self {
            case .raft(let message): message.trace(into: &hasher)
            case .request(let command): hasher.combine(101); hasher.combine(command)
            case .committed(let command): hasher.combine(102); hasher.combine(command)
            case .redirect(let command, let leader): hasher.combine(103); hasher.combine(command); hasher.combine(leader ?? "")
            }
        }
    }

    public enum Timer: SimulationTraceable, Sendable {
        case tick(generation: Int)
        case flushed(batch: Int)
        case clientSend
        case clientTimeout(attempt: Int)
        case clientBackoff(attempt: Int)

        public var description: String {
            switch self {
            case .tick(let generation): "tick #\(generation)"
            case .flushed(let batch): "flush done through write \(batch)"
            case .clientSend: "next command"
            case .clientTimeout(let attempt): "timeout of attempt \(attempt)"
            case .clientBackoff(let attempt): "retry as attempt \(attempt)"
            }
        }

        public func trace(into hasher: inout TraceHasher) {
            switch self {
            case .tick(let generation): hasher.combine(201); hasher.combine(generation)
            case .flushed(let batch): hasher.combine(202); hasher.combine(batch)
            case .clientSend: hasher.combine(203)
            case .clientTimeout(let attempt): hasher.combine(204); hasher.combine(attempt)
            case .clientBackoff(let attempt): hasher.combine(205); hasher.combine(attempt)
            }
        }
    }

    /// A replica and its shell.
    struct Server {
        var replica: RaftReplica?
        var disk = SimulatedRaftDisk()
        var compactEvery = Int.max
        var issued = 0
        var durable = 0
        var unflushed: [RaftWrite] = []
        var flushing: (batch: Int, writes: [RaftWrite])?
        var held: [(after: Int, to: String, message: RaftMessage)] = []
        var tickGeneration = 0
        var tickAt: Double?
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
    /// Replicas' shells by number (`n1` is 0): an array, so reading a field copies no
    /// `Server`.
    var servers: [Server] = []
    var clients: [String: Client] = [:]
    let serverNumbers: [String: Int]
    public private(set) var invariants: RaftInvariants
    public private(set) var healedAt: Double?

    public init(options: Options) {
        self.options = options
        replicaNames = (1...max(1, options.replicas)).map { "n\($0)" }
        let clientNames = (0..<options.clients).map { "c\($0 + 1)" }
        nodes = replicaNames + clientNames
        // Names are generated: never empty, never repeated.
        group = try! RaftGroup(replicas: replicaNames, firstLeader: options.firstLeader ? "n1" : nil)
        invariants = RaftInvariants(group: group)
        servers = replicaNames.map { _ in Server() }
        serverNumbers = Dictionary(uniqueKeysWithValues: replicaNames.enumerated().map { ($0.element, $0.offset) })
        for name in clientNames { clients[name] = Client() }
    }

    public var violation: String? { invariants.violation }

    /// "@leader": the running replica that leads the highest term.
    public func node(playing role: String) -> String? {
        guard role == "@leader" else { return nil }
        return replicaNames
            .compactMap { name in servers[serverNumbers[name]!].replica.flatMap { $0.role == .leader ? (name, $0.term) : nil } }
            .max { $0.1 < $1.1 }?.0
    }

    // MARK: - Events

    public mutating func start(_ node: String, in context: inout SimulationContext<Self>) {
        if clients[node] != nil {
            return context.schedule(.clientSend, after: context.random.uniform(in: 0.05...0.3))
        }
        guard let number = serverNumbers[node] else { return }
        var server = servers[number]
        if configuration == nil {
            var drawn = options.configuration
            if options.varyBatching {
                drawn.maxEntriesPerMessage = context.random.element(of: [1, 2, 3, 8, 512])
                drawn.maxMessagesInFlight = context.random.element(of: [1, 2, 8])
            }
            configuration = drawn
        }
        server = Server(disk: server.disk)
        if let range = options.compactEvery { server.compactEvery = context.random.integer(in: range) }
        do {
            server.replica = try RaftReplica(id: node, group: group, state: server.disk.durable, configuration: configuration!, seed: context.random.next())
        } catch {
            return invariants.storageFailed(node, .inconsistent(file: "\(node)/log", reason: "\(error)"))
        }
        servers[number] = server
        invariants.restarted(node)
        run(node, servers[number].replica!.start(now: context.now), in: &context)
    }

    public mutating func receive(_ message: Message, from sender: String, at node: String, in context: inout SimulationContext<Self>) {
        switch message {
        case .raft(let raft):
            guard let number = serverNumbers[node], let actions = servers[number].replica?.receive(raft, from: sender, now: context.now) else { return }
            run(node, actions, in: &context)
        case .request(let command):
            guard let number = serverNumbers[node], let (proposal, actions) = servers[number].replica?.propose([command], now: context.now) else { return }
            switch proposal {
            case .accepted(let term, let indices):
                servers[number].proposals[indices.lowerBound] = (term, command, sender)
            case .notLeader(let hint):
                context.send(.redirect(command: command, leader: hint), to: sender)
            }
            run(node, actions, in: &context)
        case .committed(let command):
            guard var client = clients[node], let outstanding = client.outstanding, outstanding.command == command else { return }
            invariants.acknowledged(command, firstSent: outstanding.firstSent, now: context.now)
            client.outstanding = nil
            clients[node] = client
            context.schedule(.clientSend, after: context.random.uniform(in: 0.02...0.2))
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
            guard let number = serverNumbers[node], servers[number].tickGeneration == generation, let actions = servers[number].replica?.tick(now: context.now) else { return }
            servers[number].tickAt = nil
            run(node, actions, in: &context)
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
        }
    }

    public mutating func crash(_ node: String, in context: inout SimulationContext<Self>) {
        guard let number = serverNumbers[node] else { return }
        var server = servers[number]
        do {
            let outcome = try server.disk.crash(inFlight: server.flushing?.writes ?? [], random: &context.random)
            context.note("\(node) crashed: \(outcome)")
        } catch {
            invariants.storageFailed(node, error)
        }
        servers[number] = Server(disk: server.disk)
        invariants.crashed(node, disks: servers.map(\.disk.durable))
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
        let machines = servers.map(\.machine)
        guard let reference = machines.first, machines.allSatisfy({ $0 == reference }) else {
            let applied = zip(replicaNames, machines).map { "\($0.0) applied \($0.1.appliedIndex)" }.joined(separator: ", ")
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

    /// Carries out a replica's actions under `RaftAction`'s contract.
    private mutating func run(_ node: String, _ actions: [RaftAction], in context: inout SimulationContext<Self>) {
        guard let number = serverNumbers[node], servers[number].replica != nil else { return }
        for action in actions {
            switch action {
            case .persist(let write):
                invariants.wrote(node, write, replica: servers[number].replica!)
                servers[number].issued += 1
                servers[number].unflushed.append(write)
            case .send(let receiver, let message):
                if servers[number].durable >= servers[number].issued || options.sendBeforePersist {
                    transmit(message, from: node, to: receiver, in: &context)
                } else {
                    servers[number].held.append((servers[number].issued, receiver, message))
                }
            case .apply(let entries):
                invariants.applied(node, entries)
                for entry in entries {
                    servers[number].machine.apply(entry)
                    if let proposal = servers[number].proposals.removeValue(forKey: entry.index) {
                        let won = entry.term == proposal.term && entry.command == proposal.command
                        context.send(won ? .committed(command: proposal.command) : .redirect(command: proposal.command, leader: nil), to: proposal.client)
                    }
                }
            case .applySnapshot(let snapshot):
                invariants.appliedSnapshot(node, snapshot)
                servers[number].machine.restore(snapshot)
                servers[number].proposals = servers[number].proposals.filter { $0.key > snapshot.index }
            case .stateChanged(let status):
                context.note("\(node) is \(status)")
                invariants.statusChanged(node, status, replica: servers[number].replica!, now: context.now)
            }
        }
        startFlush(node, in: &context)
        if let replica = servers[number].replica, replica.appliedIndex - replica.snapshotPosition.index >= servers[number].compactEvery,
           let actions = try? servers[number].replica!.compact(through: replica.appliedIndex, snapshot: servers[number].machine.snapshotData) {
            run(node, actions, in: &context)
        }
        scheduleTick(node, in: &context)
    }

    private mutating func transmit(_ message: RaftMessage, from node: String, to receiver: String, in context: inout SimulationContext<Self>) {
        invariants.sent(node, to: receiver, message)
        context.send(.raft(message), to: receiver)
    }

    /// Group commit: one flush at a time takes every write issued so far.
    private mutating func startFlush(_ node: String, in context: inout SimulationContext<Self>) {
        let number = serverNumbers[node]!
        guard servers[number].flushing == nil, !servers[number].unflushed.isEmpty else { return }
        let batch = servers[number].issued
        servers[number].flushing = (batch, servers[number].unflushed)
        servers[number].unflushed = []
        context.schedule(.flushed(batch: batch), after: context.random.uniform(in: options.diskLatency))
    }

    private mutating func flushed(_ node: String, batch: Int, in context: inout SimulationContext<Self>) {
        guard let number = serverNumbers[node], let flushing = servers[number].flushing, flushing.batch == batch else { return }
        servers[number].disk.commit(flushing.writes)
        servers[number].flushing = nil
        servers[number].durable = batch
        let ready = servers[number].held.prefix { $0.after <= batch }
        servers[number].held.removeFirst(ready.count)
        for send in ready { transmit(send.message, from: node, to: send.to, in: &context) }
        let last = servers[number].disk.durable.lastPosition
        run(node, servers[number].replica!.persisted(through: last.index, term: last.term, now: context.now), in: &context)
    }

    /// One pending tick per replica, at its next deadline.
    private mutating func scheduleTick(_ node: String, in context: inout SimulationContext<Self>) {
        guard let number = serverNumbers[node], let deadline = servers[number].replica?.nextDeadline else { return }
        if let pending = servers[number].tickAt, pending <= deadline + 1e-9 { return }
        servers[number].tickGeneration += 1
        servers[number].tickAt = deadline
        context.schedule(.tick(generation: servers[number].tickGeneration), after: deadline - context.now)
    }

    private mutating func sendOutstanding(_ node: String, in context: inout SimulationContext<Self>) {
        guard let client = clients[node], let outstanding = client.outstanding else { return }
        context.send(.request(command: outstanding.command), to: replicaNames[client.target])
        context.schedule(.clientTimeout(attempt: outstanding.attempt), after: options.clientTimeout)
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
