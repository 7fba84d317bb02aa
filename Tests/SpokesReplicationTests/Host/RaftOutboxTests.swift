import SpokesConsensus
import Testing
@testable import SpokesReplication

/// How a node's queue of Raft messages for one peer is cut into calls.
@Suite struct RaftOutboxTests {
    static func append(_ bytes: Int, index: Int) -> RaftMessage {
        .appendEntries(RaftAppendEntries(
            term: 1, previous: RaftLogPosition(index: index - 1, term: 1),
            entries: [RaftEntry(index: index, term: 1, command: String(repeating: "x", count: bytes))], commit: 0))
    }

    /// Review (issue 29 §1.5): one group's pipelined appends of large entries went in one
    /// call however many bytes they made, and a call larger than a frame closed the
    /// connection at every resend.
    @Test func aGroupsLargeMessagesAreSpreadOverCallsOfBoundedSize() {
        var queue = [RaftEnvelope(group: "g", messages: (1...6).map { Self.append(400_000, index: $0) })]
        var calls: [[RaftEnvelope]] = []
        while !queue.isEmpty {
            calls.append(RaftOutbox.takeBatch(from: &queue, maximumBytes: 1 << 20, maximumMessages: 4096))
        }
        #expect(calls.map { $0.reduce(0) { $0 + $1.messages.count } } == [2, 2, 2])
        #expect(calls.allSatisfy { $0.reduce(0) { $0 + $1.approximateSize } <= 1 << 20 })
        // In order: the first call holds indexes 1 and 2.
        let first = calls[0].flatMap(\.messages).map { message -> Int in
            if case .appendEntries(let append) = message { append.entries[0].index } else { 0 }
        }
        #expect(first == [1, 2])
    }

    @Test func oneMessageAlwaysGoesEvenWhenItAloneIsLarger() {
        var queue = [RaftEnvelope(group: "g", messages: [Self.append(3_000_000, index: 1), Self.append(10, index: 2)])]
        let call = RaftOutbox.takeBatch(from: &queue, maximumBytes: 1 << 20, maximumMessages: 4096)
        #expect(call.flatMap(\.messages).count == 1)
        #expect(queue.first?.messages.count == 1)
    }

    @Test func smallEnvelopesOfSeveralGroupsShareACall() {
        var queue = ["a", "b", "c"].map { RaftEnvelope(group: $0, messages: [.heartbeat(RaftHeartbeat(term: 1, commit: 0))]) }
        let call = RaftOutbox.takeBatch(from: &queue, maximumBytes: 1 << 20, maximumMessages: 4096)
        #expect(call.map(\.group) == ["a", "b", "c"] && queue.isEmpty)
    }
}
