import Foundation
import Testing
@testable import SpokesConsensus

@Suite struct RaftMessageTests {
    static let samples: [RaftMessage] = [
        .preVote(RaftVoteRequest(term: 4, last: RaftLogPosition(index: 9, term: 3))),
        .preVoteResponse(RaftVoteResponse(term: 4, granted: true)),
        .requestVote(RaftVoteRequest(term: 4, last: RaftLogPosition(index: 9, term: 3), transfer: true)),
        .requestVoteResponse(RaftVoteResponse(term: 4, granted: false)),
        .appendEntries(RaftAppendEntries(term: 4, previous: RaftLogPosition(index: 9, term: 3), entries: [RaftEntry(index: 10, term: 4, command: nil), RaftEntry(index: 11, term: 4, command: "{\"move\":1}")], commit: 8)),
        .appendEntriesResponse(RaftAppendEntriesResponse(term: 4, success: false, rejectedIndex: 9, conflictIndex: 7, conflictTerm: 2)),
        .installSnapshot(RaftInstallSnapshot(term: 4, snapshot: RaftSnapshot(index: 7, term: 2, data: "{}"))),
        .heartbeat(RaftHeartbeat(term: 4, commit: 8)),
        .heartbeatResponse(RaftHeartbeatResponse(term: 4)),
        .timeoutNow(RaftTimeoutNow(term: 4)),
    ]

    @Test(arguments: samples)
    func everyMessageSurvivesJSON(_ message: RaftMessage) throws {
        let data = try JSONEncoder().encode(message)
        #expect(try JSONDecoder().decode(RaftMessage.self, from: data) == message)
        #expect(message.isWellFormed)
    }

    @Test func appendEntriesCarriesNoIndicesPerEntry() throws {
        let json = String(decoding: try JSONEncoder().encode(Self.samples[4]), as: UTF8.self)
        #expect(json.contains("\"type\":\"appendEntries\""))
        #expect(!json.contains("\"index\""), "indices follow from previousIndex: \(json)")
    }

    @Test func unknownTypesAndOutOfRangeIndicesAreDecodingErrors() {
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(RaftMessage.self, from: Data(#"{"type":"vote","body":{}}"#.utf8)) }
        let huge = #"{"type":"appendEntries","body":{"term":1,"previousIndex":9223372036854775807,"previousTerm":1,"commit":0,"entries":[{"term":1}]}}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(RaftMessage.self, from: Data(huge.utf8)) }
    }

    @Test func illFormedMessagesAreRecognised() {
        let position = RaftLogPosition(index: 1, term: 1)
        let bad: [RaftMessage] = [
            .requestVote(RaftVoteRequest(term: -1, last: position)),
            .requestVote(RaftVoteRequest(term: 1, last: RaftLogPosition(index: 1, term: 2))),
            .appendEntries(RaftAppendEntries(term: 2, previous: position, entries: [RaftEntry(index: 3, term: 2, command: nil)], commit: 0)),
            .appendEntries(RaftAppendEntries(term: 2, previous: RaftLogPosition(index: 1, term: 2), entries: [RaftEntry(index: 2, term: 1, command: nil)], commit: 0)),
            .appendEntries(RaftAppendEntries(term: 2, previous: position, entries: [RaftEntry(index: 2, term: 3, command: nil)], commit: 0)),
            .installSnapshot(RaftInstallSnapshot(term: 1, snapshot: RaftSnapshot(index: 0, term: 1, data: ""))),
            .heartbeat(RaftHeartbeat(term: 1, commit: RaftMessage.maximumNumber + 1)),
        ]
        for message in bad { #expect(!message.isWellFormed, "\(message)") }
    }

    @Test func messagesFromItselfOrIllFormedChangeNothing() throws {
        var cluster = try RaftHarness(["a", "b", "c"])
        cluster.elect("a")
        let before = cluster["b"]
        var replica = cluster["b"]
        #expect(replica.receive(.heartbeat(RaftHeartbeat(term: 9, commit: 0)), from: "b", now: cluster.now).isEmpty)
        #expect(replica.receive(.heartbeat(RaftHeartbeat(term: -9, commit: 0)), from: "a", now: cluster.now).isEmpty)
        #expect(replica.status == before.status)
    }

    /// Random messages, well formed or not, from any member: the replica never traps and
    /// its log keeps its invariants (consecutive indices, terms never falling).
    @Test func randomMessagesNeverBreakAReplica() throws {
        var longestLog = 0
        var roles: Set<RaftRole> = []
        let group = try RaftGroup(replicas: ["a", "b", "c"])
        // Several runs, so that reaching every role is no one seed's luck.
        for seed in UInt64(7)...11 {
            var random = RaftRandom(seed: seed)
            func number(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) - (random.next() % 20 == 0 ? bound : 0) }
            var replica = try RaftReplica(id: "a", group: group, seed: 3)
            var now = 0.0
            for _ in 0..<20_000 {
                now += Double(random.next() % 100) / 1000
                let term = replica.term + number(4) - 1
                let position = RaftLogPosition(index: replica.lastLogPosition.index + number(6) - 3, term: replica.term + number(3) - 2)
                let entries = (0..<(random.next() % 4)).map { RaftEntry(index: position.index + Int($0) + 1, term: max(position.term, term - Int(random.next() % 2)), command: "c") }
                let messages: [RaftMessage] = [
                    .preVote(RaftVoteRequest(term: term, last: position)),
                    .preVoteResponse(RaftVoteResponse(term: term, granted: random.next() % 2 == 0)),
                    .requestVote(RaftVoteRequest(term: term, last: position, transfer: random.next() % 2 == 0)),
                    .requestVoteResponse(RaftVoteResponse(term: term, granted: random.next() % 2 == 0)),
                    .appendEntries(RaftAppendEntries(term: term, previous: position, entries: entries, commit: position.index + number(4))),
                    .appendEntriesResponse(RaftAppendEntriesResponse(term: term, success: random.next() % 2 == 0, matchIndex: position.index + number(4), rejectedIndex: position.index, conflictIndex: number(14), conflictTerm: random.next() % 2 == 0 ? nil : number(6))),
                    .installSnapshot(RaftInstallSnapshot(term: term, snapshot: RaftSnapshot(index: position.index, term: position.term, data: "s"))),
                    .heartbeat(RaftHeartbeat(term: term, commit: position.index + number(4))),
                    .heartbeatResponse(RaftHeartbeatResponse(term: term)),
                    .timeoutNow(RaftTimeoutNow(term: term)),
                ]
                let sender = ["b", "c", "a", "x"][Int(random.next() % 4)]
                _ = replica.receive(messages[Int(random.next() % UInt64(messages.count))], from: sender, now: now)
                if random.next() % 10 == 0 { _ = replica.tick(now: now) }
                if random.next() % 10 == 0 { _ = replica.propose(["p"], now: now) }
                if random.next() % 10 == 0 { _ = replica.persisted(through: replica.lastLogPosition.index, term: replica.lastLogPosition.term, now: now) }
                let log = replica.log
                var previousTerm = log.snapshot.term
                for (offset, entry) in log.entries.enumerated() {
                    #expect(entry.index == log.snapshot.index + offset + 1)
                    #expect(entry.term >= previousTerm)
                    previousTerm = entry.term
                }
                #expect(replica.appliedIndex <= replica.commitIndex && replica.commitIndex <= log.lastIndex)
                #expect(replica.term >= log.lastTerm)
                longestLog = max(longestLog, log.lastIndex)
                roles.insert(replica.role)
            }
        }
        #expect(longestLog > 5 && roles.count == 4, "the fuzzing reached logs and every role: \(longestLog), \(roles)")
    }
}
