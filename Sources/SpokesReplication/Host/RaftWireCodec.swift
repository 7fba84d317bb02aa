import SpokesCluster
import SpokesConsensus

/// Raft's messages between nodes (`RaftEndpoint.deliver`'s `[RaftEnvelope]`) as JSON by
/// hand, a ``HandWrittenArgument`` (issue 33 §1): every replica's heartbeats, appends
/// and their answers, several times a second per group.
///
/// The form is `Codable`'s, keys in one fixed order: `[{"group": ..., "messages":
/// [{"type": ..., "body": {...}}]}]`, with the keys each message's `Codable` conformance
/// has (an optional left out when nil). An argument holding an `installSnapshot` (rare,
/// and large) is left to `JSONEncoder` whole. ``decode(_:)`` reads only this form, with
/// the checks `RaftAppendEntries`' decoding makes; anything else is nil and goes to
/// `JSONDecoder`. `RaftWireCodecTests` checks both ways against `Codable`, and seeded
/// mutations.
enum RaftWireCodec {
    /// The JSON of `envelopes`; nil when one holds a message this codec does not write.
    static func encode(_ envelopes: [RaftEnvelope]) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(envelopes.reduce(2) { $0 + $1.approximateSize + 32 })
        out.append(UInt8(ascii: "["))
        for (index, envelope) in envelopes.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out += Literal.group
            HandJSON.string(envelope.group, to: &out)
            out += Literal.messages
            for (index, message) in envelope.messages.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                guard write(message, to: &out) else { return nil }
            }
            out += Literal.closeEnvelope
        }
        out.append(UInt8(ascii: "]"))
        return out
    }

    /// The envelopes in `bytes` when they are exactly in the form ``encode(_:)`` writes;
    /// nil otherwise (decode them with `JSONDecoder`).
    static func decode(_ bytes: ArraySlice<UInt8>) -> [RaftEnvelope]? {
        var reader = HandJSON.Reader(bytes: bytes)
        guard reader.byte(UInt8(ascii: "[")) else { return nil }
        var envelopes: [RaftEnvelope] = []
        if !reader.byte(UInt8(ascii: "]")) {
            repeat {
                guard reader.literal(Literal.group), let group = reader.string(), reader.literal(Literal.messages) else { return nil }
                var messages: [RaftMessage] = []
                if !reader.byte(UInt8(ascii: "]")) {
                    repeat {
                        guard let message = message(from: &reader) else { return nil }
                        messages.append(message)
                    } while reader.byte(UInt8(ascii: ","))
                    guard reader.byte(UInt8(ascii: "]")) else { return nil }
                }
                guard reader.byte(UInt8(ascii: "}")) else { return nil }
                envelopes.append(RaftEnvelope(group: group, messages: messages))
            } while reader.byte(UInt8(ascii: ","))
            guard reader.byte(UInt8(ascii: "]")) else { return nil }
        }
        return reader.atEnd ? envelopes : nil
    }

    private enum Literal {
        static let group = Array(#"{"group":"#.utf8)
        static let messages = Array(#","messages":["#.utf8)
        static let closeEnvelope = Array("]}".utf8)
        static let body = Array(#","body":{"term":"#.utf8)
        static let type = Array(#"{"type":""#.utf8)
        static let close2 = Array("}}".utf8)
        static let commit = Array(#","commit":"#.utf8)
        static let last = Array(#","last":{"index":"#.utf8)
        static let lastTerm = Array(#","term":"#.utf8)
        static let transfer = Array(#"},"transfer":"#.utf8)
        static let granted = Array(#","granted":"#.utf8)
        static let previousIndex = Array(#","previousIndex":"#.utf8)
        static let previousTerm = Array(#","previousTerm":"#.utf8)
        static let entries = Array(#","entries":["#.utf8)
        static let entryTerm = Array(#"{"term":"#.utf8)
        static let command = Array(#","command":"#.utf8)
        static let replicas = Array(#","replicas":"#.utf8)
        static let entriesEnd = Array(#"],"commit":"#.utf8)
        static let success = Array(#","success":"#.utf8)
        static let matchIndex = Array(#","matchIndex":"#.utf8)
        static let rejectedIndex = Array(#","rejectedIndex":"#.utf8)
        static let conflictIndex = Array(#","conflictIndex":"#.utf8)
        static let conflictTerm = Array(#","conflictTerm":"#.utf8)
    }

    /// The kinds written here, by their names on the wire (`RaftMessage.kind`) with the
    /// closing quote (so `heartbeat` is not read in `heartbeatResponse`).
    private static let kinds: [(name: [UInt8], kind: String)] = [
        "heartbeat", "heartbeatResponse", "appendEntries", "appendEntriesResponse", "preVote", "preVoteResponse", "requestVote",
        "requestVoteResponse", "timeoutNow",
    ].map { (Array("\($0)\"".utf8), $0) }

    /// `{"type":"KIND","body":{"term":T` and the rest of the body, closed; false for a
    /// message this codec leaves to `JSONEncoder`.
    private static func write(_ message: RaftMessage, to out: inout [UInt8]) -> Bool {
        if case .installSnapshot = message { return false }
        out += Literal.type
        out += message.kind.utf8
        out.append(UInt8(ascii: "\""))
        out += Literal.body
        HandJSON.integer(message.term, to: &out)
        switch message {
        case .heartbeat(let beat):
            out += Literal.commit
            HandJSON.integer(beat.commit, to: &out)
        case .heartbeatResponse, .timeoutNow, .installSnapshot:
            break
        case .preVote(let vote), .requestVote(let vote):
            out += Literal.last
            HandJSON.integer(vote.last.index, to: &out)
            out += Literal.lastTerm
            HandJSON.integer(vote.last.term, to: &out)
            out += Literal.transfer
            HandJSON.bool(vote.transfer, to: &out)
        case .preVoteResponse(let answer), .requestVoteResponse(let answer):
            out += Literal.granted
            HandJSON.bool(answer.granted, to: &out)
        case .appendEntries(let append):
            out += Literal.previousIndex
            HandJSON.integer(append.previous.index, to: &out)
            out += Literal.previousTerm
            HandJSON.integer(append.previous.term, to: &out)
            out += Literal.entries
            for (index, entry) in append.entries.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                out += Literal.entryTerm
                HandJSON.integer(entry.term, to: &out)
                if let command = entry.command {
                    out += Literal.command
                    HandJSON.string(command, to: &out)
                }
                if let replicas = entry.replicas {
                    out += Literal.replicas
                    HandJSON.strings(replicas, to: &out)
                }
                out.append(UInt8(ascii: "}"))
            }
            out += Literal.entriesEnd
            HandJSON.integer(append.commit, to: &out)
        case .appendEntriesResponse(let answer):
            out += Literal.success
            HandJSON.bool(answer.success, to: &out)
            out += Literal.matchIndex
            HandJSON.integer(answer.matchIndex, to: &out)
            out += Literal.rejectedIndex
            HandJSON.integer(answer.rejectedIndex, to: &out)
            out += Literal.conflictIndex
            HandJSON.integer(answer.conflictIndex, to: &out)
            if let term = answer.conflictTerm {
                out += Literal.conflictTerm
                HandJSON.integer(term, to: &out)
            }
        }
        out += Literal.close2
        return true
    }

    private static func message(from reader: inout HandJSON.Reader) -> RaftMessage? {
        guard reader.literal(Literal.type), let kind = kinds.first(where: { reader.literal($0.name) })?.kind,
              reader.literal(Literal.body), let term = reader.integer() else { return nil }
        let message: RaftMessage
        switch kind {
        case "heartbeat":
            guard reader.literal(Literal.commit), let commit = reader.integer() else { return nil }
            message = .heartbeat(RaftHeartbeat(term: term, commit: commit))
        case "heartbeatResponse":
            message = .heartbeatResponse(RaftHeartbeatResponse(term: term))
        case "timeoutNow":
            message = .timeoutNow(RaftTimeoutNow(term: term))
        case "preVote", "requestVote":
            guard reader.literal(Literal.last), let index = reader.integer(), reader.literal(Literal.lastTerm), let lastTerm = reader.integer(),
                  reader.literal(Literal.transfer), let transfer = reader.bool() else { return nil }
            let vote = RaftVoteRequest(term: term, last: RaftLogPosition(index: index, term: lastTerm), transfer: transfer)
            message = kind == "preVote" ? .preVote(vote) : .requestVote(vote)
        case "preVoteResponse", "requestVoteResponse":
            guard reader.literal(Literal.granted), let granted = reader.bool() else { return nil }
            let answer = RaftVoteResponse(term: term, granted: granted)
            message = kind == "preVoteResponse" ? .preVoteResponse(answer) : .requestVoteResponse(answer)
        case "appendEntries":
            guard let append = appendEntries(term: term, from: &reader) else { return nil }
            message = .appendEntries(append)
        case "appendEntriesResponse":
            guard reader.literal(Literal.success), let success = reader.bool(), reader.literal(Literal.matchIndex), let match = reader.integer(),
                  reader.literal(Literal.rejectedIndex), let rejected = reader.integer(), reader.literal(Literal.conflictIndex), let conflict = reader.integer()
            else { return nil }
            var conflictTerm: Int?
            if reader.literal(Literal.conflictTerm) {
                guard let value = reader.integer() else { return nil }
                conflictTerm = value
            }
            message = .appendEntriesResponse(RaftAppendEntriesResponse(
                term: term, success: success, matchIndex: match, rejectedIndex: rejected, conflictIndex: conflict, conflictTerm: conflictTerm))
        default:
            return nil
        }
        return reader.literal(Literal.close2) ? message : nil
    }

    /// An AppendEntries' body after its term, with the check its `Codable` decoding makes
    /// (a previous index from 0 up, with room for its entries below the largest number).
    private static func appendEntries(term: Int, from reader: inout HandJSON.Reader) -> RaftAppendEntries? {
        guard reader.literal(Literal.previousIndex), let previousIndex = reader.integer(), reader.literal(Literal.previousTerm),
              let previousTerm = reader.integer(), reader.literal(Literal.entries) else { return nil }
        var wire: [(term: Int, command: String?, replicas: [String]?)] = []
        if !reader.literal(Literal.entriesEnd) {
            repeat {
                guard reader.literal(Literal.entryTerm), let entryTerm = reader.integer() else { return nil }
                var command: String?
                var replicas: [String]?
                if reader.literal(Literal.command) {
                    guard let text = reader.string() else { return nil }
                    command = text
                }
                if reader.literal(Literal.replicas) {
                    guard let names = reader.strings() else { return nil }
                    replicas = names
                }
                guard reader.byte(UInt8(ascii: "}")) else { return nil }
                wire.append((entryTerm, command, replicas))
            } while reader.byte(UInt8(ascii: ","))
            guard reader.literal(Literal.entriesEnd) else { return nil }
        }
        guard let commit = reader.integer(), previousIndex >= 0, previousIndex <= RaftMessage.maximumNumber - wire.count else { return nil }
        let previous = RaftLogPosition(index: previousIndex, term: previousTerm)
        let entries = wire.enumerated().map { RaftEntry(index: previousIndex + $0.offset + 1, term: $0.element.term, command: $0.element.command, replicas: $0.element.replicas) }
        return RaftAppendEntries(term: term, previous: previous, entries: entries, commit: commit)
    }
}

extension RaftEnvelope: HandWrittenElements {
    public static func handWrittenJSON(of elements: [RaftEnvelope]) -> [UInt8]? { RaftWireCodec.encode(elements) }

    public static func elements(handWrittenJSON bytes: ArraySlice<UInt8>) -> [RaftEnvelope]? { RaftWireCodec.decode(bytes) }
}
