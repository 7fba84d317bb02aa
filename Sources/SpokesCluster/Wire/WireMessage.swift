/// Everything nodes (and clients) say to each other over a connection, one per frame,
/// as JSON: `{"type": "call", "body": {...}}`; from protocol 6 a frame may hold many
/// calls and replies as one ``batch(_:)`` (``WireBatch``).
public enum WireMessage: Sendable, Equatable {
    /// First message of the dialling side.
    case hello(Handshake)
    /// The accepting side's answer when it agrees to talk, with its proof that it holds
    /// the cluster secret.
    case welcome(Welcome)
    /// The dialling side's proof that it holds the cluster secret: the last handshake
    /// message. Every frame after it is authenticated (see ``HandshakeAuthentication``).
    case proof(Proof)
    /// The accepting side's answer when it does not agree to talk (wrong cluster,
    /// version or secret setting).
    case refused(Refusal)
    /// Invoke a distributed function on an actor of the receiving node.
    case call(Call)
    /// The outcome of a call.
    case reply(Reply)
    /// Calls and replies in one frame, in order (protocol 6: ``WireBatch``); each is
    /// handled as if it had come alone.
    case batch([WireMessage])
    /// Liveness: the sender is alive (any frame says so). One in
    /// ``Heartbeat/acknowledgedEvery`` is answered with `heartbeatAck` carrying the same
    /// sequence, which times the round trip.
    case heartbeat(Heartbeat)
    /// The answer to a heartbeat that ``Heartbeat/asksForAcknowledgement``.
    case heartbeatAck(Heartbeat)
    /// The sender is stopping on purpose.
    case leave
    /// The answer to a message whose type the receiver does not know.
    case unsupported(Refusal)
    /// A received message of a type this version does not know; never sent.
    case unknown(type: String)

    /// The newest wire protocol version this build speaks (it speaks the range
    /// ``ProtocolVersions/current``; a peer whose range does not meet it is refused).
    public static var protocolVersion: Int { ProtocolVersions.current.highest }

    public struct Handshake: Sendable, Equatable, Codable {
        /// The lowest protocol version the sender speaks: what a release of protocol 3,
        /// which speaks that one alone, compares for equality.
        public var protocolVersion: Int
        /// The highest version the sender speaks, sent from protocol 4 on; absent from a
        /// sender that speaks only protocol 3 (see ``ProtocolVersions``).
        public var highestProtocolVersion: Int?
        public var cluster: String
        public var node: NodeID
        /// Where the sender listens, `host:port`; empty for a client that does not listen.
        public var address: String
        public var slots: Int
        /// Waiting slots (``TaskCost/waiting``) the sender runs at once; 0 for a client.
        public var waitingSlots: Int
        /// Whether the sender holds a cluster secret; nodes with and without one do not talk.
        public var authenticated: Bool
        /// Fresh random hex for each connection (empty in beacons).
        public var nonce: String

        public init(protocolVersions: ProtocolVersions = .current, cluster: String, node: NodeID, address: String, slots: Int,
                    waitingSlots: Int = 0, authenticated: Bool = false, nonce: String = "") {
            protocolVersion = protocolVersions.lowest
            highestProtocolVersion = protocolVersions.highest >= ProtocolVersions.rangeExchange ? protocolVersions.highest : nil
            self.cluster = cluster
            self.node = node
            self.address = address
            self.slots = slots
            self.waitingSlots = waitingSlots
            self.authenticated = authenticated
            self.nonce = nonce
        }

        /// Slots a member may announce (0 for a client). Coordinators add a member's slots
        /// and queue places up, so a peer's count is checked before it is believed.
        public static let slotRange = 0...10_000
        /// Waiting slots a member may announce (0 for a client).
        public static let waitingSlotRange = 0...100_000

        /// The protocol versions the sender speaks.
        public var protocolVersions: ProtocolVersions {
            ProtocolVersions(lowest: protocolVersion, highest: highestProtocolVersion ?? protocolVersion)
        }

        /// Throws when a number in this handshake (or beacon) is out of range: the
        /// handshake is then refused with the reason, and a beacon is dropped.
        public func checkRanges() throws(OutOfRange) {
            try OutOfRange.check("protocolVersion", protocolVersion, in: 1...Int.max)
            if let highestProtocolVersion {
                try OutOfRange.check("highestProtocolVersion", highestProtocolVersion, in: protocolVersion...Int.max)
            }
            try OutOfRange.check("slots", slots, in: Self.slotRange)
            try OutOfRange.check("waitingSlots", waitingSlots, in: Self.waitingSlotRange)
        }
    }

    public struct Welcome: Sendable, Equatable, Codable {
        public var handshake: Handshake
        /// Hex HMAC proving the acceptor holds the secret; empty without one.
        public var proof: String
    }

    public struct Proof: Sendable, Equatable, Codable {
        /// Hex HMAC proving the dialler holds the secret; empty without one.
        public var tag: String
    }

    public struct Refusal: Sendable, Equatable, Codable {
        public var reason: String
        /// Set when the dialler's name is taken by a live member: where that member
        /// listens. The dialler stops (see ``NameConflict``).
        public var nameTakenAt: String?
    }

    public struct Call: Sendable, Equatable, Codable {
        public var id: UInt64
        public var recipient: ActorID
        /// The mangled name of the distributed function (`RemoteCallTarget.identifier`).
        public var target: String
        /// Mangled type names of the call's generic substitutions.
        public var genericSubstitutions: [String]
        /// Each argument as its own JSON text.
        public var arguments: [String]
    }

    public struct Reply: Sendable, Equatable, Codable {
        public enum Outcome: Sendable, Equatable, Codable {
            /// The returned value as JSON text.
            case value(String)
            case void
            /// The thrown error's type name and description.
            case error(type: String, message: String)
        }

        public var id: UInt64
        public var outcome: Outcome
    }

    /// A heartbeat's round number, the same on every connection in one round.
    public struct Heartbeat: Sendable, Equatable, Codable {
        public var sequence: UInt64

        /// One heartbeat in this many is acknowledged. Liveness needs no answer: each end
        /// sends its own heartbeats, and any frame refreshes the peer's
        /// `lastReceived`. The answers only time the round trip (the dashboard's and
        /// the node observation's `roundTrips`), so answering every one doubled the
        /// frames a healthy cluster carries (80% of all frames in the simulator at 10
        /// nodes) for no use. The rule is the sequence's, so both ends agree without
        /// saying so; a release that acknowledges every heartbeat still gives a sample
        /// for each one that asks.
        public static let acknowledgedEvery: UInt64 = 5

        /// Whether the receiver answers this heartbeat with `heartbeatAck`.
        public var asksForAcknowledgement: Bool { sequence % Self.acknowledgedEvery == 0 }
    }
}

extension WireMessage: Codable {
    private enum Kind: String, Codable {
        case hello, welcome, proof, refused, call, reply, batch, heartbeat, heartbeatAck, leave, unsupported
    }

    private enum CodingKeys: String, CodingKey {
        case type, body
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let name = try container.decode(String.self, forKey: .type)
        guard let kind = Kind(rawValue: name) else {
            self = .unknown(type: String(name.prefix(64)))
            return
        }
        switch kind {
        case .hello: self = .hello(try container.decode(Handshake.self, forKey: .body))
        case .welcome: self = .welcome(try container.decode(Welcome.self, forKey: .body))
        case .proof: self = .proof(try container.decode(Proof.self, forKey: .body))
        case .unsupported: self = .unsupported(try container.decode(Refusal.self, forKey: .body))
        case .refused: self = .refused(try container.decode(Refusal.self, forKey: .body))
        case .call: self = .call(try container.decode(Call.self, forKey: .body))
        case .reply: self = .reply(try container.decode(Reply.self, forKey: .body))
        case .batch:
            let messages = try container.decode([WireMessage].self, forKey: .body)
            do {
                try WireBatch.check(messages)
            } catch {
                throw DecodingError.dataCorruptedError(forKey: .body, in: container, debugDescription: error.description)
            }
            self = .batch(messages)
        case .heartbeat: self = .heartbeat(try container.decode(Heartbeat.self, forKey: .body))
        case .heartbeatAck: self = .heartbeatAck(try container.decode(Heartbeat.self, forKey: .body))
        case .leave: self = .leave
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .hello(let body): try container.encode(Kind.hello, forKey: .type); try container.encode(body, forKey: .body)
        case .welcome(let body): try container.encode(Kind.welcome, forKey: .type); try container.encode(body, forKey: .body)
        case .refused(let body): try container.encode(Kind.refused, forKey: .type); try container.encode(body, forKey: .body)
        case .call(let body): try container.encode(Kind.call, forKey: .type); try container.encode(body, forKey: .body)
        case .reply(let body): try container.encode(Kind.reply, forKey: .type); try container.encode(body, forKey: .body)
        case .batch(let body): try container.encode(Kind.batch, forKey: .type); try container.encode(body, forKey: .body)
        case .heartbeat(let body): try container.encode(Kind.heartbeat, forKey: .type); try container.encode(body, forKey: .body)
        case .heartbeatAck(let body): try container.encode(Kind.heartbeatAck, forKey: .type); try container.encode(body, forKey: .body)
        case .proof(let body): try container.encode(Kind.proof, forKey: .type); try container.encode(body, forKey: .body)
        case .unsupported(let body): try container.encode(Kind.unsupported, forKey: .type); try container.encode(body, forKey: .body)
        case .leave: try container.encode(Kind.leave, forKey: .type)
        case .unknown(let type): try container.encode(type, forKey: .type)
        }
    }
}
