/// The member list as a pure state machine: it takes what the node observed (a beacon,
/// a connection, a heartbeat, a drop, the passing of time) and returns what the node
/// should do (dial an address, close a connection, publish an event). It never touches
/// a socket or a clock, so every rule is tested without a network.
///
/// Rules:
/// - a beacon or seed of an unknown node adds it as `joining` and asks to dial it
///   (again at most once per `redialInterval` while it is not connected: a fresh
///   beacon says it is up now); a seed that does not connect is dialled forever, backing
///   off: `redialInterval`, then twice that after each dial that did not connect, up to
///   `maximumRedialInterval` (a connection starts the count again), as Consul's
///   `retry_join` does for peers not up yet;
/// - a completed handshake makes a member `alive`; so does hearing from a `suspect`, but
///   only a message received after the suspicion began: a frozen node's old messages
///   never bring it back;
/// - silence past `suspectTimeout` makes an alive member `suspect`, past `deadTimeout`
///   `dead` (and asks to close its connection);
/// - a dropped connection makes a member `dead` at once: its calls have already failed;
/// - a `leave` makes it `left`;
/// - a tick that comes more than `lateTickAfter` seconds after the previous one means
///   this node's own timers ran late (it was paused or starved): the silence it measured
///   is its own, so nobody is suspected or declared dead on it. Silence is measured again
///   from that tick, while fresh heartbeats go out (Lifeguard's local health, simplified);
/// - a node name belongs to one incarnation at a time. A beacon of another incarnation
///   of an alive or suspect member is ignored (a newcomer with a taken name is refused
///   when it dials; see ``ClusterSystem``); once the member is dead or has left, any
///   incarnation of that name is admitted at once, older or newer. A newer incarnation
///   replaces a `joining` entry, and a completed handshake replaces any entry but a
///   live newer one (`removed`, then `joined`);
/// - a beacon with this node's own name but another incarnation asks to dial it, so the
///   two find out which started first (the other yields; see ``ClusterSystem``);
/// - dead and left members are removed after `forgetAfter` seconds.
public struct Membership: Sendable {
    /// What the node observed.
    public enum Observation: Sendable, Hashable {
        /// A discovery beacon (or a seed's handshake details) naming a node and its address.
        case beacon(node: NodeID, address: String, slots: Int, waitingSlots: Int = 0, protocolVersions: ProtocolVersions = .current)
        /// A static seed address whose node is not known yet.
        case seed(address: String)
        /// A connection to `node` finished its handshake.
        case connected(node: NodeID, address: String, slots: Int, waitingSlots: Int = 0, protocolVersions: ProtocolVersions = .current)
        /// A message arrived from `node`.
        case heard(node: NodeID)
        /// The connection to `node` dropped.
        case disconnected(node: NodeID)
        /// `node` announced it is leaving.
        case left(node: NodeID)
        /// Time passed; check timeouts.
        case tick
    }

    /// What the node should do.
    public enum Action: Sendable, Hashable {
        case dial(address: String)
        case disconnect(node: NodeID)
        case publish(MembershipEvent)
        /// This node's own ticks stopped for `seconds` (it was paused or starved): nobody
        /// was suspected or declared dead on that silence; for the node's log.
        case timersRanLate(seconds: Double)
    }

    public let local: NodeID
    public var suspectTimeout: Double
    public var deadTimeout: Double
    public var redialInterval: Double
    /// The longest wait between two dials of an address that does not connect.
    public var maximumRedialInterval: Double
    public var forgetAfter: Double
    /// A gap between two ticks longer than this means this node's timers ran late.
    public var lateTickAfter: Double

    /// Members by node name (this node is not among them).
    public private(set) var members: [String: Member] = [:]
    private var connected: Set<String> = []
    /// Per dial key (a seed's or a name's address, a node's name): when it was last
    /// dialled and how many dials in a row did not connect.
    private var dials: [String: (last: Double, unanswered: Int)] = [:]
    /// When each suspect member became suspect: only news from after it clears it.
    private var suspectedSince: [String: Double] = [:]
    /// When the latest tick was observed (nil before the first): a tick more than
    /// ``lateTickAfter`` after it means this node's timers ran late.
    public private(set) var lastTick: Double?
    /// Silence is counted from here at the earliest: the tick that ended this node's
    /// last pause (nothing heard during a pause counts against a peer).
    private var silenceCountedFrom = -Double.infinity

    /// `lateTickAfter` defaults to `suspectTimeout`: a node that did not tick for that
    /// long would suspect a healthy peer on its own silence alone.
    public init(local: NodeID, suspectTimeout: Double, deadTimeout: Double, redialInterval: Double = 1, maximumRedialInterval: Double = 10,
                forgetAfter: Double = 60, lateTickAfter: Double? = nil) {
        self.local = local
        self.suspectTimeout = suspectTimeout
        self.deadTimeout = deadTimeout
        self.redialInterval = redialInterval
        self.maximumRedialInterval = max(redialInterval, maximumRedialInterval)
        self.forgetAfter = forgetAfter
        self.lateTickAfter = lateTickAfter ?? suspectTimeout
    }

    /// Applies one observation made at monotonic time `now` (seconds) and returns the actions.
    public mutating func observe(_ observation: Observation, at now: Double) -> [Action] {
        switch observation {
        case .beacon(let node, let address, let slots, let waitingSlots, let versions):
            return beacon(node, address: address, slots: slots, waitingSlots: waitingSlots, versions: versions, now: now)
        case .seed(let address):
            guard !members.values.contains(where: { $0.address == address && connected.contains($0.node.name) }) else { return [] }
            return dialIfDue(key: "seed:\(address)", address: address, now: now, backingOff: true)
        case .connected(let node, let address, let slots, let waitingSlots, let versions):
            return connect(node, address: address, slots: slots, waitingSlots: waitingSlots, versions: versions, now: now)
        case .heard(let node):
            guard var member = members[node.name], member.node == node else { return [] }
            member.lastHeard = max(member.lastHeard, now)
            members[node.name] = member
            // News only: a message from before the suspicion (the same old timestamp fed
            // again, say) says nothing about the member now.
            guard member.state == .suspect, let since = suspectedSince[node.name], now > since else { return [] }
            return transition(node.name, to: .alive)
        case .disconnected(let node):
            guard members[node.name]?.node == node else { return [] }
            connected.remove(node.name)
            guard let state = members[node.name]?.state, state == .alive || state == .suspect || state == .joining else { return [] }
            return transition(node.name, to: .dead)
        case .left(let node):
            guard members[node.name]?.node == node else { return [] }
            connected.remove(node.name)
            return transition(node.name, to: .left)
        case .tick:
            return tick(now: now)
        }
    }

    /// Members sorted by name, for display.
    public var sortedMembers: [Member] {
        members.values.sorted { $0.node.name < $1.node.name }
    }

    /// Hands `body` each member in place (no copy of them, no sorting), in the order of
    /// ``members`` (a dictionary's: the same every run under deterministic hashing).
    public func forEachMember(_ body: (Member) throws -> Void) rethrows {
        for member in members.values { try body(member) }
    }

    private mutating func beacon(_ node: NodeID, address: String, slots: Int, waitingSlots: Int, versions: ProtocolVersions, now: Double) -> [Action] {
        if node.name == local.name {
            return node == local ? [] : dialIfDue(key: "name:\(address)", address: address, now: now)
        }
        var actions: [Action] = []
        if let known = members[node.name], known.node != node {
            switch known.state {
            case .dead, .left:
                break
            case .joining where node.incarnation > known.node.incarnation:
                break
            case .joining, .alive, .suspect:
                return []
            }
            members[node.name] = nil
            connected.remove(node.name)
            suspectedSince[node.name] = nil
            actions.append(.publish(.removed(known)))
        }
        if members[node.name] == nil {
            let member = Member(node: node, address: address, state: .joining, slots: slots, waitingSlots: waitingSlots, lastHeard: now,
                                protocolVersions: versions)
            members[node.name] = member
            actions.append(.publish(.joined(member)))
        }
        if !connected.contains(node.name), members[node.name]?.state != .left {
            actions += dialIfDue(key: node.name, address: address, now: now)
        }
        return actions
    }

    private mutating func connect(_ node: NodeID, address: String, slots: Int, waitingSlots: Int, versions: ProtocolVersions, now: Double) -> [Action] {
        guard node.name != local.name else { return [] }
        var actions: [Action] = []
        if let known = members[node.name], known.node != node {
            let holdsTheName = known.state == .alive || known.state == .suspect
            if holdsTheName, node.incarnation < known.node.incarnation { return [] }
            members[node.name] = nil
            actions.append(.publish(.removed(known)))
        }
        connected.insert(node.name)
        for key in [node.name, "seed:\(address)", "name:\(address)"] { dials[key] = nil }
        suspectedSince[node.name] = nil
        if var member = members[node.name] {
            member.address = address
            member.slots = slots
            member.waitingSlots = waitingSlots
            member.protocolVersions = versions
            member.lastHeard = now
            members[node.name] = member
            return actions + transition(node.name, to: .alive)
        }
        let member = Member(node: node, address: address, state: .alive, slots: slots, waitingSlots: waitingSlots, lastHeard: now,
                            protocolVersions: versions)
        members[node.name] = member
        return actions + [.publish(.joined(member))]
    }

    private mutating func tick(now: Double) -> [Action] {
        var actions: [Action] = []
        if let last = lastTick, now - last > lateTickAfter {
            silenceCountedFrom = now
            actions.append(.timersRanLate(seconds: now - last))
        }
        lastTick = max(lastTick ?? now, now)
        // Most ticks, in a healthy cluster every one: nothing is due, nothing to sort.
        guard members.values.contains(where: { due($0, now: now) != nil }) else { return actions }
        for (name, member) in members.sorted(by: { $0.key < $1.key }) {
            switch due(member, now: now) {
            case .dead:
                connected.remove(name)
                suspectedSince[name] = nil
                actions += transition(name, to: .dead) + [.disconnect(node: member.node)]
            case .suspect:
                suspectedSince[name] = now
                actions += transition(name, to: .suspect)
            case .forgotten:
                members[name] = nil
                actions.append(.publish(.removed(member)))
            case nil:
                break
            }
        }
        return actions
    }

    /// What a tick does to a member by the timeout rules.
    private enum Due {
        case dead, suspect, forgotten
    }

    /// What a tick at `now` does to `member`, or nil: the rule in one place, so that
    /// ``tick(now:)`` first asks whether any member is due (most ticks, none) and sorts
    /// the members to act on them in name order only then.
    private func due(_ member: Member, now: Double) -> Due? {
        let silence = now - member.lastHeard
        let silenceToBlame = now - max(member.lastHeard, silenceCountedFrom)
        switch member.state {
        case .alive where silenceToBlame > deadTimeout, .suspect where silenceToBlame > deadTimeout:
            return .dead
        case .alive where silenceToBlame > suspectTimeout:
            return .suspect
        case .dead where silence > forgetAfter, .left where silence > forgetAfter, .joining where silence > forgetAfter:
            return .forgotten
        default:
            return nil
        }
    }

    private mutating func transition(_ name: String, to state: Member.State) -> [Action] {
        guard var member = members[name], member.state != state else { return [] }
        let previous = member.state
        member.state = state
        members[name] = member
        return [.publish(.changed(member, from: previous))]
    }

    private mutating func dialIfDue(key: String, address: String, now: Double, backingOff: Bool = false) -> [Action] {
        let unanswered = dials[key]?.unanswered ?? 0
        let wait = backingOff ? redialWait(afterUnanswered: unanswered) : redialInterval
        if let last = dials[key]?.last, now - last < wait { return [] }
        dials[key] = (now, unanswered + 1)
        return [.dial(address: address)]
    }

    /// The wait before the next dial of a key whose last `unanswered` dials did not
    /// connect: `redialInterval`, doubling with each, at most `maximumRedialInterval`.
    public func redialWait(afterUnanswered unanswered: Int) -> Double {
        min(maximumRedialInterval, redialInterval * Double(1 << min(max(unanswered - 1, 0), 30)))
    }
}
