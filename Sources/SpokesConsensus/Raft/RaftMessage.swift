/// What replicas of one group say to each other. Every message carries the sender's
/// term; a replica adopts a higher term it sees (except in PreVote, which never changes
/// terms, and in votes refused under the leader lease) and answers a lower one with its
/// own, so a deposed leader learns at once that it is deposed.
///
/// Messages travel as JSON, `{"type": "...", "body": {...}}`; entries inside
/// AppendEntries carry only their term and command (their indices follow from
/// `previous`). A replica checks every message with `isWellFormed` and ignores those that
/// are not, so no value from a peer can make it trap or break its log's invariants.
public enum RaftMessage: Sendable, Hashable {
    /// "Would you vote for me in `term`?", asked before a real election (PreVote, Raft
    /// thesis §9.6): nobody changes term, so a replica that cannot win, say one rejoining
    /// from a partition, cannot disturb a healthy leader.
    case preVote(RaftVoteRequest)
    case preVoteResponse(RaftVoteResponse)
    case requestVote(RaftVoteRequest)
    case requestVoteResponse(RaftVoteResponse)
    case appendEntries(RaftAppendEntries)
    /// The answer to AppendEntries and to InstallSnapshot.
    case appendEntriesResponse(RaftAppendEntriesResponse)
    case installSnapshot(RaftInstallSnapshot)
    /// A leader's periodic "I am alive", with the commit index the receiver may use.
    case heartbeat(RaftHeartbeat)
    case heartbeatResponse(RaftHeartbeatResponse)
    /// Leadership transfer: "start an election now" (the receiver skips PreVote, and
    /// voters skip the leader lease for it).
    case timeoutNow(RaftTimeoutNow)

    /// The sender's term (for PreVote, the term it would campaign in).
    public var term: Int {
        switch self {
        case .preVote(let m), .requestVote(let m): m.term
        case .preVoteResponse(let m), .requestVoteResponse(let m): m.term
        case .appendEntries(let m): m.term
        case .appendEntriesResponse(let m): m.term
        case .installSnapshot(let m): m.term
        case .heartbeat(let m): m.term
        case .heartbeatResponse(let m): m.term
        case .timeoutNow(let m): m.term
        }
    }

    /// The message's name on the wire.
    public var kind: String {
        switch self {
        case .preVote: "preVote"
        case .preVoteResponse: "preVoteResponse"
        case .requestVote: "requestVote"
        case .requestVoteResponse: "requestVoteResponse"
        case .appendEntries: "appendEntries"
        case .appendEntriesResponse: "appendEntriesResponse"
        case .installSnapshot: "installSnapshot"
        case .heartbeat: "heartbeat"
        case .heartbeatResponse: "heartbeatResponse"
        case .timeoutNow: "timeoutNow"
        }
    }

    /// The largest term or index a message may carry: far beyond any real log, small
    /// enough that index arithmetic cannot overflow and JSON numbers stay exact.
    public static let maximumNumber = 1 << 52

    /// Most replicas a configuration a peer sends may name, and the longest name.
    public static let maximumReplicas = 64
    public static let maximumReplicaNameBytes = 256

    /// Whether `replicas` can be a group's configuration: sorted names without repeats,
    /// at least one, none empty, within the bounds above.
    public static func isConfiguration(_ replicas: [String]) -> Bool {
        guard (1...maximumReplicas).contains(replicas.count) else { return false }
        for (index, name) in replicas.enumerated() {
            guard (1...maximumReplicaNameBytes).contains(name.utf8.count) else { return false }
            if index > 0, replicas[index - 1] >= name { return false }
        }
        return true
    }

    /// Whether the numbers are in range and an AppendEntries' entries can follow its
    /// `previous` position in a valid log (consecutive indices, terms never decreasing,
    /// none above the message's term).
    public var isWellFormed: Bool {
        func valid(_ numbers: Int...) -> Bool { numbers.allSatisfy { $0 >= 0 && $0 <= Self.maximumNumber } }
        switch self {
        case .preVote(let m), .requestVote(let m):
            return valid(m.term, m.last.index, m.last.term) && m.last.term <= m.term
        case .preVoteResponse(let m), .requestVoteResponse(let m):
            return valid(m.term)
        case .appendEntries(let m):
            guard valid(m.term, m.previous.index, m.previous.term, m.commit), m.previous.term <= m.term,
                  m.entries.count <= Self.maximumNumber - m.previous.index else { return false }
            var term = m.previous.term
            for (offset, entry) in m.entries.enumerated() {
                guard entry.index == m.previous.index + offset + 1, entry.term >= term, entry.term >= 1, entry.term <= m.term,
                      entry.replicas.map({ entry.command == nil && Self.isConfiguration($0) }) ?? true else { return false }
                term = entry.term
            }
            return true
        case .appendEntriesResponse(let m):
            return valid(m.term, m.matchIndex, m.rejectedIndex, m.conflictIndex, m.conflictTerm ?? 0)
        case .installSnapshot(let m):
            return valid(m.term, m.snapshot.index, m.snapshot.term, m.offset, m.total ?? 0) && m.snapshot.term <= m.term && m.snapshot.index >= 1 && m.snapshot.term >= 1
                && (m.total.map { m.offset + m.snapshot.data.utf8.count <= $0 } ?? (m.offset == 0))
                && (m.snapshot.replicas.map(Self.isConfiguration) ?? true)
        case .heartbeat(let m):
            return valid(m.term, m.commit)
        case .heartbeatResponse(let m):
            return valid(m.term)
        case .timeoutNow(let m):
            return valid(m.term)
        }
    }
}

/// A PreVote or RequestVote: the candidate's term and the position of its last entry.
public struct RaftVoteRequest: Codable, Sendable, Hashable {
    public var term: Int
    public var last: RaftLogPosition
    /// Set when the election follows a leadership transfer (TimeoutNow): voters grant it
    /// even while they still hear from the current leader.
    public var transfer: Bool

    public init(term: Int, last: RaftLogPosition, transfer: Bool = false) {
        self.term = term
        self.last = last
        self.transfer = transfer
    }
}

/// The answer to a vote request. A granted PreVote carries the term asked about; any
/// other answer carries the responder's own term.
public struct RaftVoteResponse: Codable, Sendable, Hashable {
    public var term: Int
    public var granted: Bool

    public init(term: Int, granted: Bool) {
        self.term = term
        self.granted = granted
    }
}

/// Entries to append after `previous`, which the receiver must already hold (the
/// consistency check), and the leader's commit index.
public struct RaftAppendEntries: Sendable, Hashable {
    public var term: Int
    public var previous: RaftLogPosition
    public var entries: [RaftEntry]
    public var commit: Int

    public init(term: Int, previous: RaftLogPosition, entries: [RaftEntry], commit: Int) {
        self.term = term
        self.previous = previous
        self.entries = entries
        self.commit = commit
    }
}

extension RaftAppendEntries: Codable {
    private enum CodingKeys: String, CodingKey { case term, previousIndex, previousTerm, entries, commit }

    private struct WireEntry: Codable {
        var term: Int
        var command: String?
        var replicas: [String]?
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        term = try container.decode(Int.self, forKey: .term)
        let previous = RaftLogPosition(index: try container.decode(Int.self, forKey: .previousIndex), term: try container.decode(Int.self, forKey: .previousTerm))
        commit = try container.decode(Int.self, forKey: .commit)
        let wire = try container.decode([WireEntry].self, forKey: .entries)
        guard previous.index >= 0, previous.index <= RaftMessage.maximumNumber - wire.count else {
            throw DecodingError.dataCorruptedError(forKey: .previousIndex, in: container, debugDescription: "previous index \(previous.index) out of range")
        }
        self.previous = previous
        entries = wire.enumerated().map { RaftEntry(index: previous.index + $0.offset + 1, term: $0.element.term, command: $0.element.command, replicas: $0.element.replicas) }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(term, forKey: .term)
        try container.encode(previous.index, forKey: .previousIndex)
        try container.encode(previous.term, forKey: .previousTerm)
        try container.encode(entries.map { WireEntry(term: $0.term, command: $0.command, replicas: $0.replicas) }, forKey: .entries)
        try container.encode(commit, forKey: .commit)
    }
}

/// The answer to AppendEntries or InstallSnapshot.
///
/// On success `matchIndex` is the highest index the receiver now knows to match the
/// leader's log (and holds durably: it is sent only after its entries are persisted).
/// On refusal, `rejectedIndex` is the `previous.index` that did not match, and the hint
/// says where the leader should try next: `conflictTerm` is the receiver's term at
/// `rejectedIndex` (nil when its log is shorter) and `conflictIndex` the first index of
/// that term in its log (or its last index + 1), so the leader skips a whole term per
/// round trip instead of one entry.
public struct RaftAppendEntriesResponse: Codable, Sendable, Hashable {
    public var term: Int
    public var success: Bool
    public var matchIndex: Int
    public var rejectedIndex: Int
    public var conflictIndex: Int
    public var conflictTerm: Int?

    public init(term: Int, success: Bool, matchIndex: Int = 0, rejectedIndex: Int = 0, conflictIndex: Int = 0, conflictTerm: Int? = nil) {
        self.term = term
        self.success = success
        self.matchIndex = matchIndex
        self.rejectedIndex = rejectedIndex
        self.conflictIndex = conflictIndex
        self.conflictTerm = conflictTerm
    }

    static func accepted(term: Int, matchIndex: Int) -> Self { Self(term: term, success: true, matchIndex: matchIndex) }
}

/// A leader's snapshot, sent to a follower that needs entries the leader has compacted.
/// One message carries the whole snapshot: group snapshots are small (a job record and its
/// book), well inside a frame.
/// A leader's snapshot, or one chunk of it: `snapshot.data` holds the bytes from
/// `offset` of a snapshot of `total` bytes (UTF-8). Without `total` the message holds
/// the whole snapshot (as before snapshots were chunked).
public struct RaftInstallSnapshot: Codable, Sendable, Hashable {
    public var term: Int
    public var snapshot: RaftSnapshot
    /// Where this chunk starts in the snapshot's data, in bytes.
    public var offset: Int
    /// The whole snapshot's data length in bytes; nil: this message holds all of it.
    public var total: Int?

    public init(term: Int, snapshot: RaftSnapshot, offset: Int = 0, total: Int? = nil) {
        self.term = term
        self.snapshot = snapshot
        self.offset = offset
        self.total = total
    }

    private enum CodingKeys: String, CodingKey { case term, snapshot, offset, total }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        term = try container.decode(Int.self, forKey: .term)
        snapshot = try container.decode(RaftSnapshot.self, forKey: .snapshot)
        offset = try container.decodeIfPresent(Int.self, forKey: .offset) ?? 0
        total = try container.decodeIfPresent(Int.self, forKey: .total)
    }

    /// The chunks of `snapshot` for `term`, each with at most about `chunkBytes` bytes of
    /// its data, cut between Unicode scalars. One message without `total` when it fits.
    public static func chunks(of snapshot: RaftSnapshot, term: Int, chunkBytes: Int) -> [RaftInstallSnapshot] {
        let bytes = Array(snapshot.data.utf8)
        guard bytes.count > chunkBytes else { return [RaftInstallSnapshot(term: term, snapshot: snapshot)] }
        var chunks: [RaftInstallSnapshot] = []
        var start = 0
        while start < bytes.count {
            var end = min(bytes.count, start + max(4, chunkBytes))
            // Never inside a scalar: back off over continuation bytes (10xxxxxx).
            while end < bytes.count, end > start + 1, bytes[end] & 0xC0 == 0x80 { end -= 1 }
            let piece = RaftSnapshot(index: snapshot.index, term: snapshot.term, data: String(decoding: bytes[start..<end], as: UTF8.self), replicas: snapshot.replicas)
            chunks.append(RaftInstallSnapshot(term: term, snapshot: piece, offset: start, total: bytes.count))
            start = end
        }
        return chunks
    }
}

public struct RaftHeartbeat: Codable, Sendable, Hashable {
    public var term: Int
    /// The leader's commit index, capped at what it knows the receiver holds.
    public var commit: Int

    public init(term: Int, commit: Int) {
        self.term = term
        self.commit = commit
    }
}

public struct RaftHeartbeatResponse: Codable, Sendable, Hashable {
    public var term: Int

    public init(term: Int) { self.term = term }
}

public struct RaftTimeoutNow: Codable, Sendable, Hashable {
    public var term: Int

    public init(term: Int) { self.term = term }
}

extension RaftMessage: Codable {
    private enum CodingKeys: String, CodingKey { case type, body }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let type = try container.decode(String.self, forKey: .type)
        switch type {
        case "preVote": self = .preVote(try container.decode(RaftVoteRequest.self, forKey: .body))
        case "preVoteResponse": self = .preVoteResponse(try container.decode(RaftVoteResponse.self, forKey: .body))
        case "requestVote": self = .requestVote(try container.decode(RaftVoteRequest.self, forKey: .body))
        case "requestVoteResponse": self = .requestVoteResponse(try container.decode(RaftVoteResponse.self, forKey: .body))
        case "appendEntries": self = .appendEntries(try container.decode(RaftAppendEntries.self, forKey: .body))
        case "appendEntriesResponse": self = .appendEntriesResponse(try container.decode(RaftAppendEntriesResponse.self, forKey: .body))
        case "installSnapshot": self = .installSnapshot(try container.decode(RaftInstallSnapshot.self, forKey: .body))
        case "heartbeat": self = .heartbeat(try container.decode(RaftHeartbeat.self, forKey: .body))
        case "heartbeatResponse": self = .heartbeatResponse(try container.decode(RaftHeartbeatResponse.self, forKey: .body))
        case "timeoutNow": self = .timeoutNow(try container.decode(RaftTimeoutNow.self, forKey: .body))
        default: throw DecodingError.dataCorruptedError(forKey: .type, in: container, debugDescription: "unknown Raft message type '\(type)'")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .type)
        switch self {
        case .preVote(let m), .requestVote(let m): try container.encode(m, forKey: .body)
        case .preVoteResponse(let m), .requestVoteResponse(let m): try container.encode(m, forKey: .body)
        case .appendEntries(let m): try container.encode(m, forKey: .body)
        case .appendEntriesResponse(let m): try container.encode(m, forKey: .body)
        case .installSnapshot(let m): try container.encode(m, forKey: .body)
        case .heartbeat(let m): try container.encode(m, forKey: .body)
        case .heartbeatResponse(let m): try container.encode(m, forKey: .body)
        case .timeoutNow(let m): try container.encode(m, forKey: .body)
        }
    }
}

extension RaftMessage: CustomStringConvertible {
    public var description: String {
        switch self {
        case .preVote(let m): "preVote(t\(m.term) last \(m.last))"
        case .requestVote(let m): "requestVote(t\(m.term) last \(m.last)\(m.transfer ? " transfer" : ""))"
        case .preVoteResponse(let m): "preVoteResponse(t\(m.term) \(m.granted ? "granted" : "refused"))"
        case .requestVoteResponse(let m): "requestVoteResponse(t\(m.term) \(m.granted ? "granted" : "refused"))"
        case .appendEntries(let m):
            "appendEntries(t\(m.term) after \(m.previous) \(m.entries.isEmpty ? "no entries" : "\(m.entries.first!.index)...\(m.entries.last!.index)") commit \(m.commit))"
        case .appendEntriesResponse(let m):
            m.success ? "appendEntriesResponse(t\(m.term) match \(m.matchIndex))"
                : "appendEntriesResponse(t\(m.term) refused \(m.rejectedIndex) hint \(m.conflictIndex)@\(m.conflictTerm.map(String.init) ?? "-"))"
        case .installSnapshot(let m): "installSnapshot(t\(m.term) through \(m.snapshot.position))"
        case .heartbeat(let m): "heartbeat(t\(m.term) commit \(m.commit))"
        case .heartbeatResponse(let m): "heartbeatResponse(t\(m.term))"
        case .timeoutNow(let m): "timeoutNow(t\(m.term))"
        }
    }
}
