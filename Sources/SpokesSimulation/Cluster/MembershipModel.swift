import SpokesCluster

/// The cluster's membership in the simulator (issue 18 §2): nodes `m1`...`mN`, each the
/// real `Membership` state machine inside a small shell that does what `ClusterNode`
/// and `ClusterSystem` do with it: greets every node it has no connection to on each tick
/// (as beacons and dials do), refuses a greeting from another incarnation of a name a
/// live member holds (as the handshake does), heartbeats every member each tick, feeds
/// what arrives as observations with the time it arrived, and carries out the actions.
///
/// Invariants, after every event:
/// - a member an observer suspected is shown alive again only after a message from it
///   arrived after the suspicion began (a frozen node is never alive until it speaks);
/// - a member nothing has arrived from for longer than `suspectAfter` is not shown alive
///   by an observer whose own ticks ran on time for that long (failure detection is
///   complete; a paused or starved observer judges nobody on its own silence);
/// - a name at an observer belongs to one incarnation, the newest that greeted it, once
///   the older one is dead or gone.
///
/// Liveness, at the end (the faults healed `settle` seconds before): every running node
/// lists every other running node alive, at its current incarnation.
public struct MembershipModel: SimulationModel {
    public struct Options: Sendable, Hashable {
        public var nodes: Int
        public var heartbeatInterval: Double
        public var suspectAfter: Double
        public var deadAfter: Double
        /// Plug the hardening issue's shell bug back in (issue 15 §2): feed every
        /// connected member's `heard` on each tick with the tick's time, news or not, as
        /// the old `ClusterNode` fed its stale timestamp. Exists to show the invariant
        /// catches a shell that does.
        public var feedsHeardEveryTick = false

        public init(nodes: Int, heartbeatInterval: Double = 0.2, suspectAfter: Double = 0.6, deadAfter: Double = 1.2) {
            self.nodes = nodes
            self.heartbeatInterval = heartbeatInterval
            self.suspectAfter = suspectAfter
            self.deadAfter = deadAfter
        }
    }

    public enum Message: SimulationTraceable, Sendable {
        case hello(NodeID)
        case welcome(NodeID)
        case heartbeat(NodeID)

        public var description: String {
            switch self {
            case .hello(let node): "hello \(node)"
            case .welcome(let node): "welcome \(node)"
            case .heartbeat(let node): "heartbeat \(node)"
            }
        }

        public func trace(into hasher: inout TraceHasher) {
            switch self {
            case .hello(let node): hasher.combine(1); hasher.combine(node.description)
            case .welcome(let node): hasher.combine(2); hasher.combine(node.description)
            case .heartbeat(let node): hasher.combine(3); hasher.combine(node.description)
            }
        }
    }

    public enum Timer: SimulationTraceable, Sendable {
        case tick(incarnation: UInt64)

        public var description: String {
            switch self {
            case .tick(let incarnation): "tick #\(incarnation)"
            }
        }

        public func trace(into hasher: inout TraceHasher) {
            switch self {
            case .tick(let incarnation): hasher.combine(4); hasher.combine(UInt64(incarnation))
            }
        }
    }

    /// One running node: its membership and what its shell remembers.
    struct Node {
        var membership: Membership
        /// When a message from each sender (by name) last arrived.
        var lastArrived: [String: Double] = [:]
        /// When each member became suspect here, from the published events.
        var suspectedAt: [String: Double] = [:]
        /// When this node started, its last tick, and since when its ticks came on time.
        var started: Double
        var lastTick: Double?
        var steadySince: Double
    }

    public let options: Options
    public let nodes: [String]
    private var running: [String: Node] = [:]
    private var incarnations: [String: UInt64] = [:]
    private var nextIncarnation: UInt64 = 1
    public private(set) var violation: String?
    /// Suspicions cleared with news, over the run.
    public private(set) var recoveries = 0
    /// Messages sent, by kind, over the run (for the scale model: issue 18 §3).
    public private(set) var sent: [String: Int] = [:]
    /// Each (observer, member, state, time) a member turned suspect or dead at.
    public private(set) var verdicts: [(observer: String, member: String, state: Member.State, time: Double)] = []
    /// When every running node last came to list every other one alive at its current
    /// incarnation (checked on `m1`'s ticks), and whether they do now.
    public private(set) var convergedAt: Double?

    public init(options: Options) {
        self.options = options
        nodes = (1...max(1, options.nodes)).map { "m\($0)" }
    }

    public mutating func start(_ node: String, in context: inout SimulationContext<Self>) {
        let incarnation = nextIncarnation
        nextIncarnation += 1
        incarnations[node] = incarnation
        running[node] = Node(
            membership: Membership(local: NodeID(name: node, incarnation: incarnation), suspectTimeout: options.suspectAfter, deadTimeout: options.deadAfter),
            started: context.now, steadySince: context.now)
        tick(node, in: &context)
    }

    public mutating func receive(_ message: Message, from sender: String, at node: String, in context: inout SimulationContext<Self>) {
        guard var state = running[node] else { return }
        let now = context.now
        state.lastArrived[sender] = now
        running[node] = state
        switch message {
        case .hello(let peer):
            // The handshake refuses another incarnation of a name a live member holds.
            if let known = state.membership.members[peer.name], known.node != peer, known.state == .alive || known.state == .suspect,
               peer.incarnation < known.node.incarnation {
                return
            }
            observe(.connected(node: peer, address: peer.name, slots: 1), at: node, in: &context)
            if let me = running[node]?.membership.local {
                context.send(.welcome(me), to: sender)
                sent["welcome", default: 0] += 1
            }
        case .welcome(let peer):
            observe(.connected(node: peer, address: peer.name, slots: 1), at: node, in: &context)
        case .heartbeat(let peer):
            observe(.heard(node: peer), at: node, in: &context)
        }
    }

    public mutating func fire(_ timer: Timer, at node: String, in context: inout SimulationContext<Self>) {
        guard case .tick(let incarnation) = timer, incarnations[node] == incarnation, running[node] != nil else { return }
        tick(node, in: &context)
    }

    public mutating func crash(_ node: String, in context: inout SimulationContext<Self>) {
        running[node] = nil
    }

    public mutating func healed(in context: inout SimulationContext<Self>) {}

    /// Every running node lists every other running node alive at its current incarnation.
    public var converged: Bool {
        running.allSatisfy { observer, state in
            incarnations.allSatisfy { other, incarnation in
                other == observer || running[other] == nil
                    || state.membership.members[other].map { $0.state == .alive && $0.node.incarnation == incarnation } == true
            }
        }
    }

    public func finalViolation(now: Double) -> String? {
        for (observer, state) in running.sorted(by: { $0.key < $1.key }) {
            for (other, incarnation) in incarnations.sorted(by: { $0.key < $1.key }) where other != observer && running[other] != nil {
                guard let member = state.membership.members[other] else { return "\(observer) does not list \(other) after the faults healed" }
                guard member.state == .alive, member.node.incarnation == incarnation else {
                    return "\(observer) lists \(member.node) as \(member.state), not \(other)#\(incarnation) alive, after the faults healed"
                }
            }
        }
        return nil
    }

    /// A tick of `node`'s shell: greet whoever it has no connection to, heartbeat its
    /// members, let membership check its timeouts, and schedule the next tick.
    private mutating func tick(_ node: String, in context: inout SimulationContext<Self>) {
        guard let state = running[node] else { return }
        let me = state.membership.local
        for other in nodes where other != node {
            let member = state.membership.members[other]
            if member == nil || member?.state == .dead || member?.state == .left {
                context.send(.hello(me), to: other)
                sent["hello", default: 0] += 1
            } else {
                context.send(.heartbeat(me), to: other)
                sent["heartbeat", default: 0] += 1
            }
        }
        if node == nodes[0] { convergedAt = converged ? (convergedAt ?? context.now) : nil }
        if options.feedsHeardEveryTick {
            for member in state.membership.members.values where member.state != .dead {
                observe(.heard(node: member.node), at: node, in: &context)
            }
        }
        observe(.tick, at: node, in: &context)
        checkFailureDetection(at: node, now: context.now)
        context.schedule(.tick(incarnation: me.incarnation), after: options.heartbeatInterval)
    }

    /// After `node`'s tick: with its ticks on time for longer than `suspectAfter` (as its
    /// membership counts them), no member it shows alive has been silent that long.
    private mutating func checkFailureDetection(at node: String, now: Double) {
        guard var state = running[node] else { return }
        if let last = state.lastTick, now - last > state.membership.lateTickAfter { state.steadySince = now }
        state.lastTick = now
        running[node] = state
        guard violation == nil, now - state.steadySince > options.suspectAfter + options.heartbeatInterval else { return }
        for member in state.membership.members.values.sorted(by: { $0.node.name < $1.node.name }) where member.state == .alive {
            let silence = now - max(state.lastArrived[member.node.name] ?? state.started, state.started)
            if silence > options.suspectAfter + 1e-9 {
                violation = "\(node) still shows \(member.node) alive at \(fixed(now, 3)) s after \(fixed(silence, 3)) s with no message from it"
                return
            }
        }
    }

    /// Feeds `observation` to `node`'s membership at the event's time, carries out its
    /// actions, and checks the invariants on what it publishes.
    private mutating func observe(_ observation: Membership.Observation, at node: String, in context: inout SimulationContext<Self>) {
        guard var state = running[node] else { return }
        let now = context.now
        let actions = state.membership.observe(observation, at: now)
        for action in actions {
            switch action {
            case .dial(let address):
                context.send(.hello(state.membership.local), to: address)
            case .disconnect, .timersRanLate:
                break
            case .publish(let event):
                context.note("\(node): \(event)")
                switch event {
                case .changed(let member, let from) where member.state == .suspect && from == .alive:
                    state.suspectedAt[member.node.name] = now
                    verdicts.append((node, member.node.name, .suspect, now))
                case .changed(let member, _) where member.state == .dead:
                    verdicts.append((node, member.node.name, .dead, now))
                case .changed(let member, let from) where member.state == .alive && from == .suspect:
                    let name = member.node.name
                    let since = state.suspectedAt[name] ?? -.infinity
                    let news = state.lastArrived[name] ?? -.infinity
                    if news > since {
                        recoveries += 1
                    } else if violation == nil {
                        violation = "\(node) shows \(member.node) alive again at \(fixed(now, 3)) s with no message from it since it was suspected at \(fixed(since, 3)) s"
                    }
                    state.suspectedAt[name] = nil
                default:
                    break
                }
            }
        }
        for member in state.membership.members.values where violation == nil {
            let newest = incarnations[member.node.name] ?? 0
            if member.state == .alive, member.node.incarnation > newest {
                violation = "\(node) lists \(member.node) alive, an incarnation that never started"
            }
        }
        running[node] = state
    }
}
