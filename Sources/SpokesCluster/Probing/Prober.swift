/// Probes silent members over UDP, SWIM-style, as a pure state machine: what the node
/// knows of its members and the probe messages it received go in, datagrams to send and
/// evidence that a member is alive come out. Time and randomness come from outside
/// (`at:` and a seed), so every rule is tested without a socket.
///
/// Why (issue 21 §3): heartbeats travel on each peer's TCP connection, and after a short
/// cut TCP's retransmission back-off (0.2, 0.4, 0.8 s ...) keeps them queued for longer
/// than the cut itself, so a glitch of 0.8 s used to cost a death. A datagram does not
/// queue behind lost segments: as soon as the link is back, a probe and its answer get
/// through, and the member's silence ends there.
///
/// Rules:
/// - a member silent for more than `probeAfter` (nothing on its connection, no answer to
///   a probe) is probed directly (`ping`) and indirectly: up to `helpers` members heard
///   from recently are asked to probe it for us (`pingRequest`), so a member we cannot
///   reach but others can is not suspected on our link alone. A silent member is probed
///   again every `probeInterval`;
/// - a `ping` is answered with an `ack` to the address it came from, but is no evidence:
///   a recorded ping could be played back;
/// - a `pingRequest` about a member this node knows makes it ping that member (at the
///   address it knows, never one a datagram names) and pass the answer back;
/// - an `ack` is evidence only when it answers a probe of ours still outstanding (a fresh
///   64-bit nonce, unguessable from outside), about the member that probe was for: the
///   member `answered`. Unknown, late and mismatched acks are ignored;
/// - probes unanswered after `answerWithin` are forgotten, and at most
///   ``maximumOutstanding`` are remembered, so nothing a peer sends grows without bound.
public struct Prober: Sendable {
    /// A member as the node knows it: where it listens, and when it was last heard from.
    public struct Peer: Sendable, Hashable {
        public var node: NodeID
        /// `host:port`: the node's cluster port, where it also takes probes (UDP).
        public var address: String
        public var lastHeard: Double

        public init(node: NodeID, address: String, lastHeard: Double) {
            self.node = node
            self.address = address
            self.lastHeard = lastHeard
        }
    }

    /// What probing nodes send each other.
    public enum Message: Sendable, Hashable, Codable {
        /// Are you there? Answer with an `ack` of this nonce.
        case ping(nonce: UInt64, from: NodeID)
        /// Probe `target` for me and pass its answer back with this nonce.
        case pingRequest(nonce: UInt64, from: NodeID, target: NodeID)
        /// `about` answered the probe with this nonce (`from` passes it on when it is not `about`).
        case ack(nonce: UInt64, from: NodeID, about: NodeID)
    }

    /// What the node should do.
    public enum Action: Sendable, Hashable {
        case send(Message, to: String)
        /// `node` answered a probe now: news from it, as a message on its connection is.
        case answered(NodeID)
    }

    /// A probe sent and not answered yet.
    private struct Pending: Sendable {
        var target: NodeID
        var sentAt: Double
        /// Set when the probe is on behalf of another member: where its answer goes.
        var relayTo: (address: String, nonce: UInt64)?
    }

    /// Most probes remembered at once.
    public static let maximumOutstanding = 4096

    public let local: NodeID
    public var probeAfter: Double
    public var probeInterval: Double
    public var helpers: Int
    public var answerWithin: Double

    /// The members of the last tick (alive or suspect), this node left out, as given.
    private var latestPeers: [Peer] = []
    /// ``latestPeers`` by name (the last of a name wins), made when first needed after a
    /// tick: most ticks probe nobody and no probe request comes, and making it at every
    /// tick was most of a tick's cost.
    private var peersByName: [String: Peer]?
    private var lastProbe: [String: Double] = [:]
    private var outstanding: [UInt64: Pending] = [:]
    private var randomState: UInt64

    /// `probeAfter` should be above the heartbeat interval (a healthy member is never
    /// probed) and below the suspect timeout (a silent one is probed before it is suspected).
    public init(local: NodeID, probeAfter: Double, probeInterval: Double, helpers: Int = 2, answerWithin: Double = 2, seed: UInt64) {
        self.local = local
        self.probeAfter = probeAfter
        self.probeInterval = probeInterval
        self.helpers = max(0, helpers)
        self.answerWithin = answerWithin
        randomState = seed
    }

    /// Probes sent and not answered yet.
    public var outstandingCount: Int { outstanding.count }

    /// Time passed: `peers` are the members now (alive or suspect), with when each was
    /// last heard from. Probes the silent ones.
    public mutating func tick(peers current: [Peer], at now: Double) -> [Action] {
        latestPeers = current.filter { $0.node.name != local.name }
        peersByName = nil
        if !lastProbe.isEmpty {
            let peers = self.peers
            lastProbe = lastProbe.filter { peers[$0.key] != nil }
        }
        if !outstanding.isEmpty { outstanding = outstanding.filter { now - $0.value.sentAt <= answerWithin } }
        // Most ticks, in a healthy cluster every one: nobody to probe, nothing to sort.
        guard latestPeers.contains(where: { now - $0.lastHeard > probeAfter }) else { return [] }
        let peers = self.peers
        let due = peers.values.filter { now - $0.lastHeard > probeAfter && now - (lastProbe[$0.node.name] ?? -.infinity) >= probeInterval }
        guard !due.isEmpty else { return [] }
        let heard = peers.values.filter { now - $0.lastHeard <= probeAfter }.sorted { $0.node.name < $1.node.name }
        var actions: [Action] = []
        for peer in due.sorted(by: { $0.node.name < $1.node.name }) {
            guard let nonce = remember(Pending(target: peer.node, sentAt: now)) else { break }
            lastProbe[peer.node.name] = now
            actions.append(.send(.ping(nonce: nonce, from: local), to: peer.address))
            var candidates = heard.filter { $0.node.name != peer.node.name }
            for _ in 0..<min(helpers, candidates.count) {
                let helper = candidates.remove(at: Int(nextRandom() % UInt64(candidates.count)))
                actions.append(.send(.pingRequest(nonce: nonce, from: local, target: peer.node), to: helper.address))
            }
        }
        return actions
    }

    /// A probe message arrived from `address` (where the datagram came from).
    public mutating func receive(_ message: Message, from address: String, at now: Double) -> [Action] {
        switch message {
        case .ping(let nonce, let from):
            guard from.name != local.name else { return [] }
            return [.send(.ack(nonce: nonce, from: local, about: local), to: address)]
        case .pingRequest(let nonce, let from, let target):
            let peers = self.peers
            guard from.name != local.name, peers[from.name]?.node == from, let peer = peers[target.name], peer.node == target,
                  let relayed = remember(Pending(target: target, sentAt: now, relayTo: (address, nonce)))
            else { return [] }
            return [.send(.ping(nonce: relayed, from: local), to: peer.address)]
        case .ack(let nonce, _, let about):
            guard let pending = outstanding[nonce], pending.target == about, now - pending.sentAt <= answerWithin else { return [] }
            outstanding[nonce] = nil
            if let relay = pending.relayTo {
                return [.send(.ack(nonce: relay.nonce, from: local, about: about), to: relay.address)]
            }
            return [.answered(about)]
        }
    }

    /// The members of the last tick by name (``peersByName``, made now if it is not yet).
    private var peers: [String: Peer] {
        mutating get {
            if let peersByName { return peersByName }
            let made = Dictionary(latestPeers.map { ($0.node.name, $0) }, uniquingKeysWith: { _, last in last })
            peersByName = made
            return made
        }
    }

    /// Remembers `pending` under a fresh nonce; nil when too many are outstanding.
    private mutating func remember(_ pending: Pending) -> UInt64? {
        guard outstanding.count < Self.maximumOutstanding else { return nil }
        var nonce = nextRandom()
        while outstanding[nonce] != nil { nonce = nextRandom() }
        outstanding[nonce] = pending
        return nonce
    }

    /// SplitMix64: the seed (random in a node, fixed in a test) fixes every nonce.
    private mutating func nextRandom() -> UInt64 {
        randomState &+= 0x9E37_79B9_7F4A_7C15
        var z = randomState
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
