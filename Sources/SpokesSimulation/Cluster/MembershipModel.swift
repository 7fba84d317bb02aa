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
///   the older one is dead or gone;
/// - no observer replaces a member that still runs and was heard from within
///   `suspectAfter` by another incarnation of its name (with `twinStartsAt`, a second
///   process takes `m2`'s name; the greeting of a name a fresh member holds is refused,
///   and the refused twin yields, as `NameConflict` has a node do).
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
        /// When a second process with `m2`'s name (a newer incarnation, at address
        /// `m2-twin`) starts; nil: never. Needs at least 2 nodes.
        public var twinStartsAt: Double?
        /// Plug the hardening issue's duplicate-name bug back in: a greeting from a newer
        /// incarnation of a name a live, fresh member holds is admitted, and replaces it.
        public var admitsTakenNames = false

        public init(nodes: Int, heartbeatInterval: Double = ClusterSettings.defaults.heartbeatInterval,
                    suspectAfter: Double = ClusterSettings.defaults.suspectTimeout, deadAfter: Double = ClusterSettings.defaults.deadTimeout) {
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
        /// The greeting was refused: a live member at `holder` has the name.
        case refused(holder: String)

        public var description: String {
            switch self {
            case .hello(let node): "hello \(node)"
            case .welcome(let node): "welcome \(node)"
            case .heartbeat(let node): "heartbeat \(node)"
            case .refused(let holder): "refused: the name is \(holder)'s"
            }
        }

        public func trace(into hasher: inout TraceHasher) {
            switch self {
            case .hello(let node): hasher.combine(1); hasher.combine(node.description)
            case .welcome(let node): hasher.combine(2); hasher.combine(node.description)
            case .heartbeat(let node): hasher.combine(3); hasher.combine(node.description)
            case .refused(let holder): hasher.combine(5); hasher.combine(holder)
            }
        }
    }

    public enum Timer: SimulationTraceable, Sendable {
        case tick(incarnation: UInt64)
        /// The twin process starts (see ``Options/twinStartsAt``).
        case twinStarts

        public var description: String {
            switch self {
            case .tick(let incarnation): "tick #\(incarnation)"
            case .twinStarts: "the twin starts"
            }
        }

        public func trace(into hasher: inout TraceHasher) {
            switch self {
            case .tick(let incarnation): hasher.combine(4); hasher.combine(UInt64(incarnation))
            case .twinStarts: hasher.combine(6)
            }
        }
    }

    /// The twin's address: a second process with `m2`'s name.
    public static let twin = "m2-twin"

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

    /// The twin's identity once it started.
    private var twinNode: NodeID?

    public init(options: Options) {
        self.options = options
        let members = (1...max(1, options.nodes)).map { "m\($0)" }
        nodes = members + (options.twinStartsAt != nil && members.count >= 2 ? [Self.twin] : [])
    }

    /// The twin is no fault's target: it exists to be refused.
    public var faultableNodes: [String] { nodes.filter { $0 != Self.twin } }

    public mutating func start(_ node: String, in context: inout SimulationContext<Self>) {
        if node == Self.twin {
            context.schedule(.twinStarts, after: options.twinStartsAt ?? 0)
            return
        }
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
            if let holder = holder(refusing: peer, at: state, now: now) {
                if !holder.isEmpty { context.send(.refused(holder: holder), to: sender) }
                return
            }
            observe(.connected(node: peer, address: sender, slots: 1), at: node, in: &context)
            if let me = running[node]?.membership.local {
                context.send(.welcome(me), to: sender)
                sent["welcome", default: 0] += 1
            }
        case .welcome(let peer):
            // The dialler checks the acceptor's handshake too.
            guard holder(refusing: peer, at: state, now: now) == nil else { return }
            observe(.connected(node: peer, address: sender, slots: 1), at: node, in: &context)
        case .heartbeat(let peer):
            observe(.heard(node: peer), at: node, in: &context)
        case .refused:
            // Where two processes share a name, the refused one yields it and stops, as
            // `NameConflict` has a node do; otherwise (a restarted node refused while its
            // old incarnation is fresh: the model drops no connection on a crash) it
            // greets again next tick.
            if options.twinStartsAt != nil, node == Self.twin || node == "m2" { running[node] = nil }
        }
    }

    /// Whether the handshake refuses `peer` at an observer: an older incarnation of a name
    /// a live member holds always (the member started first), any other incarnation while
    /// that member was heard from within the suspect timeout (``NameConflict``), unless
    /// the old shell's bug is plugged in. Returns the holder's address ("" for a silent
    /// refusal), or nil when `peer` is let in.
    private func holder(refusing peer: NodeID, at state: Node, now: Double) -> String? {
        guard let known = state.membership.members[peer.name], known.node != peer, known.state == .alive || known.state == .suspect else { return nil }
        let fresh = now - (state.lastArrived[known.address] ?? -.infinity) < options.suspectAfter
        if fresh, !options.admitsTakenNames { return known.address }
        return peer.incarnation < known.node.incarnation ? "" : nil
    }

    public mutating func fire(_ timer: Timer, at node: String, in context: inout SimulationContext<Self>) {
        switch timer {
        case .twinStarts:
            guard node == Self.twin, twinNode == nil else { return }
            let twin = NodeID(name: "m2", incarnation: nextIncarnation)
            nextIncarnation += 1
            twinNode = twin
            incarnations[node] = twin.incarnation
            running[node] = Node(
                membership: Membership(local: twin, suspectTimeout: options.suspectAfter, deadTimeout: options.deadAfter),
                started: context.now, steadySince: context.now)
            tick(node, in: &context)
        case .tick(let incarnation):
            guard incarnations[node] == incarnation, running[node] != nil else { return }
            tick(node, in: &context)
        }
    }

    public mutating func crash(_ node: String, in context: inout SimulationContext<Self>) {
        running[node] = nil
    }

    public mutating func healed(in context: inout SimulationContext<Self>) {}

    /// Every running node lists every other running node alive at its current incarnation.
    public var converged: Bool {
        running.filter { $0.key != Self.twin }.allSatisfy { observer, state in
            incarnations.allSatisfy { other, incarnation in
                other == observer || other == Self.twin || running[other] == nil
                    || state.membership.members[other].map { $0.state == .alive && $0.node.incarnation == incarnation } == true
            }
        }
    }

    public func finalViolation(now: Double) -> String? {
        // With a twin, m2's name belongs to whichever of the two still runs.
        var expected = incarnations.filter { $0.key != Self.twin && running[$0.key] != nil }
        if running["m2"] == nil, running[Self.twin] != nil, let twin = twinNode { expected["m2"] = twin.incarnation }
        for (observer, state) in running.sorted(by: { $0.key < $1.key }) {
            for (other, incarnation) in expected.sorted(by: { $0.key < $1.key }) where other != observer && !(observer == Self.twin && other == "m2") {
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
            let silence = now - max(state.lastArrived[member.address] ?? state.started, state.started)
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
                case .removed(let member):
                    // Replaced by another incarnation of its name: never while it runs and speaks.
                    let heard = state.lastArrived[member.address] ?? -.infinity
                    if violation == nil, running[member.address]?.membership.local == member.node, now - heard < options.suspectAfter {
                        violation = "\(node) replaced \(member.node), which runs and was heard \(fixed(now - heard, 3)) s ago, by another incarnation of its name"
                    }
                case .changed(let member, let from) where member.state == .alive && from == .suspect:
                    let name = member.node.name
                    let since = state.suspectedAt[name] ?? -.infinity
                    let news = state.lastArrived[member.address] ?? -.infinity
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
            if member.state == .alive, member.node.incarnation > newest, member.node != twinNode {
                violation = "\(node) lists \(member.node) alive, an incarnation that never started"
            }
        }
        running[node] = state
    }
}
