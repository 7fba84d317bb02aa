@testable import SpokesConsensus

/// A few replicas wired by hand for unit tests: sent messages wait in `inFlight` until
/// the test delivers (or drops) them; writes are durable at once and acknowledged with
/// `persisted`, as a shell with an instant disk would.
struct RaftHarness {
    struct Envelope: Hashable {
        var from: String
        var to: String
        var message: RaftMessage
    }

    var replicas: [String: RaftReplica] = [:]
    var durable: [String: RaftDurableState] = [:]
    var inFlight: [Envelope] = []
    /// Every message delivered, in order.
    var delivered: [Envelope] = []
    var applied: [String: [RaftEntry]] = [:]
    var snapshotsApplied: [String: [RaftSnapshot]] = [:]
    var writes: [String: [RaftWrite]] = [:]
    var now = 0.0
    private(set) var names: [String]
    let group: RaftGroup
    /// The definitions of replicas that joined after the start (``join(_:replicas:)``).
    var joinedGroups: [String: RaftGroup] = [:]
    let configuration: RaftConfiguration
    /// When false, writes wait in `unpersisted` until `flush`.
    var instantDisk = true
    var unpersisted: [String: [RaftWrite]] = [:]

    init(_ names: [String], firstLeader: String? = nil, configuration: RaftConfiguration = RaftConfiguration(), start: Bool = true) throws {
        self.names = names
        group = try RaftGroup(replicas: names, firstLeader: firstLeader)
        self.configuration = configuration
        for (number, name) in names.enumerated() {
            replicas[name] = try RaftReplica(id: name, group: group, configuration: configuration, seed: UInt64(number + 1))
            durable[name] = .empty
        }
        if start { for name in names { handle(name, replicas[name]!.start(now: now)) } }
    }

    subscript(name: String) -> RaftReplica { replicas[name]! }

    var leaders: [String] { names.filter { replicas[$0]!.role == .leader } }

    /// Carries out a batch of actions the way `RaftAction` asks a shell to.
    mutating func handle(_ name: String, _ actions: [RaftAction]) {
        var last: RaftLogPosition?
        for action in actions {
            switch action {
            case .persist(let write):
                writes[name, default: []].append(write)
                if instantDisk {
                    durable[name]!.apply(write)
                    last = durable[name]!.lastPosition
                } else {
                    unpersisted[name, default: []].append(write)
                }
            case .send(let to, let message):
                inFlight.append(Envelope(from: name, to: to, message: message))
            case .apply(let entries):
                applied[name, default: []].append(contentsOf: entries)
            case .applySnapshot(let snapshot):
                snapshotsApplied[name, default: []].append(snapshot)
            case .stateChanged:
                break
            }
        }
        if let last {
            handle(name, replicas[name]!.persisted(through: last.index, term: last.term, now: now))
        }
    }

    /// Makes a replica's waiting writes durable (with `instantDisk` off).
    mutating func flush(_ name: String) {
        for write in unpersisted[name] ?? [] { durable[name]!.apply(write) }
        unpersisted[name] = []
        let last = durable[name]!.lastPosition
        handle(name, replicas[name]!.persisted(through: last.index, term: last.term, now: now))
    }

    mutating func tick(_ name: String) { handle(name, replicas[name]!.tick(now: now)) }

    mutating func tickAll() { for name in names { tick(name) } }

    /// Advances time to `time`, ticking every replica every 10 ms on the way.
    mutating func advance(to time: Double, deliver: Bool = false) {
        while now < time - 1e-9 {
            now = min(time, now + 0.01)
            tickAll()
            if deliver { deliverAll() }
        }
    }

    @discardableResult
    mutating func propose(_ name: String, _ commands: [String]) -> RaftProposal {
        let (proposal, actions) = replicas[name]!.propose(commands, now: now)
        handle(name, actions)
        return proposal
    }

    /// Starts a new, empty replica `name` whose node was given the group as `replicas`
    /// (what a replacement's node is told when it is asked to open the group).
    mutating func join(_ name: String, replicas definition: [String], seed: UInt64 = 77) throws {
        let joined = try RaftGroup(replicas: definition)
        joinedGroups[name] = joined
        names.append(name)
        durable[name] = .empty
        replicas[name] = try RaftReplica(id: name, group: joined, configuration: configuration, seed: seed)
        handle(name, replicas[name]!.start(now: now))
    }

    /// Asks `leader` to make `newReplicas` the group's replicas.
    @discardableResult
    mutating func proposeReplicas(_ leader: String, _ newReplicas: [String]) throws(RaftReplica.ConfigurationChangeError) -> RaftProposal {
        let (proposal, actions) = try replicas[leader]!.proposeReplicas(newReplicas, now: now)
        handle(leader, actions)
        return proposal
    }

    /// Delivers the first message in flight that matches, if any.
    @discardableResult
    mutating func deliverFirst(where matches: (Envelope) -> Bool = { _ in true }) -> Envelope? {
        guard let index = inFlight.firstIndex(where: matches) else { return nil }
        let envelope = inFlight.remove(at: index)
        delivered.append(envelope)
        handle(envelope.to, replicas[envelope.to]!.receive(envelope.message, from: envelope.from, now: now))
        return envelope
    }

    /// Delivers messages (and those they cause) until none is left, dropping those
    /// `drop` says; bounded so a livelock fails the test instead of hanging it.
    mutating func deliverAll(dropping drop: (Envelope) -> Bool = { _ in false }) {
        var budget = 100_000
        while !inFlight.isEmpty, budget > 0 {
            budget -= 1
            let envelope = inFlight.removeFirst()
            if drop(envelope) { continue }
            delivered.append(envelope)
            handle(envelope.to, replicas[envelope.to]!.receive(envelope.message, from: envelope.from, now: now))
        }
        precondition(budget > 0, "messages kept flowing: livelock")
    }

    mutating func dropAll(where matches: (Envelope) -> Bool = { _ in true }) {
        inFlight.removeAll(where: matches)
    }

    /// Restarts a replica from what it persisted (volatile state and unflushed writes
    /// lost).
    mutating func restart(_ name: String, seed: UInt64 = 99) throws {
        unpersisted[name] = []
        inFlight.removeAll { $0.to == name }
        replicas[name] = try RaftReplica(id: name, group: joinedGroups[name] ?? group, state: durable[name]!, configuration: configuration, seed: seed)
        applied[name] = []
        handle(name, replicas[name]!.start(now: now))
    }

    /// Replaces a replica by one restored from `state` (as if its storage held it).
    mutating func restore(_ name: String, _ state: RaftDurableState) throws {
        durable[name] = state
        try restart(name)
    }

    /// Elects `name`: ticks it past its election timeout and delivers everything.
    mutating func elect(_ name: String) {
        now += configuration.electionTimeout.upperBound + 0.01
        tick(name)
        deliverAll()
    }

    func messages(from: String? = nil, to: String? = nil, kind: String? = nil) -> [Envelope] {
        inFlight.filter { (from == nil || $0.from == from) && (to == nil || $0.to == to) && (kind == nil || $0.message.kind == kind) }
    }

    /// The refusals `name` sent in answer to AppendEntries.
    func refusals(from name: String) -> [RaftAppendEntriesResponse] {
        delivered.compactMap { envelope in
            guard envelope.from == name, case .appendEntriesResponse(let response) = envelope.message, !response.success else { return nil }
            return response
        }
    }

    func commands(appliedBy name: String) -> [String] {
        (applied[name] ?? []).compactMap(\.command)
    }
}
