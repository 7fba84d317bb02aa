import Foundation
import SpokesCluster
import SpokesConsensus
import SpokesTestKit
import Testing
@testable import SpokesReplication

/// Raft's messages between nodes by hand against `Codable`, pure: what ``RaftWireCodec``
/// writes, `JSONDecoder` (an earlier release) reads as the same envelopes; what it reads
/// is what `JSONDecoder` reads; anything off its form goes to `JSONDecoder`.
@Suite struct RaftWireCodecTests {
    static let texts = ["", "plain", "\"quoted\" \\ back", "line\nbreak\u{01}", "é漢字🚲", #"{"json":[1,"x"]}"#]

    static var messages: [RaftMessage] {
        let position = RaftLogPosition(index: 7, term: 3)
        var messages: [RaftMessage] = [
            .heartbeat(RaftHeartbeat(term: 3, commit: 0)), .heartbeat(RaftHeartbeat(term: .max, commit: .min)),
            .heartbeatResponse(RaftHeartbeatResponse(term: 0)), .timeoutNow(RaftTimeoutNow(term: -1)),
            .preVote(RaftVoteRequest(term: 4, last: position)), .requestVote(RaftVoteRequest(term: 4, last: position, transfer: true)),
            .preVoteResponse(RaftVoteResponse(term: 4, granted: true)), .requestVoteResponse(RaftVoteResponse(term: 5, granted: false)),
            .appendEntriesResponse(RaftAppendEntriesResponse(term: 3, success: true, matchIndex: 12)),
            .appendEntriesResponse(RaftAppendEntriesResponse(term: 3, success: false, rejectedIndex: 9, conflictIndex: 4, conflictTerm: 2)),
            .appendEntries(RaftAppendEntries(term: 3, previous: position, entries: [], commit: 6)),
        ]
        for (offset, text) in texts.enumerated() {
            let entries = (0...offset).map { index in
                RaftEntry(index: 8 + index, term: 3, command: index == 1 ? nil : text + String(index), replicas: index == 1 ? ["a", text + "b"] : nil)
            }
            messages.append(.appendEntries(RaftAppendEntries(term: 3, previous: position, entries: entries, commit: 7)))
        }
        return messages
    }

    static var arguments: [[RaftEnvelope]] {
        var arguments: [[RaftEnvelope]] = [[], [RaftEnvelope(group: "g", messages: [])]]
        for (index, text) in texts.enumerated() {
            arguments.append([RaftEnvelope(group: "bikejob-" + text, messages: Array(messages.dropFirst(index * 3).prefix(4))),
                              RaftEnvelope(group: text, messages: [messages[index]])])
        }
        arguments.append([RaftEnvelope(group: "all", messages: messages)])
        return arguments
    }

    @Test func whatItWritesJSONDecoderReadsAsTheSameEnvelopesAndSoDoesIt() throws {
        for envelopes in Self.arguments {
            let bytes = try #require(envelopes.handWrittenJSON)
            #expect(try JSONDecoder().decode([RaftEnvelope].self, from: Data(bytes)) == envelopes, "\(String(decoding: bytes, as: UTF8.self).prefix(300))")
            #expect([RaftEnvelope](handWrittenJSON: bytes[...]) == envelopes)
        }
    }

    @Test func aSnapshotIsLeftToJSONEncoderWhole() {
        let snapshot = RaftSnapshot(index: 3, term: 1, data: "{}", replicas: ["a"])
        let envelopes = [RaftEnvelope(group: "g", messages: [.heartbeat(RaftHeartbeat(term: 1, commit: 0)), .installSnapshot(RaftInstallSnapshot(term: 1, snapshot: snapshot))])]
        #expect(envelopes.handWrittenJSON == nil)
    }

    @Test func whatJSONEncoderWritesIsReadTheSameOrLeftToJSONDecoder() throws {
        for envelopes in Self.arguments {
            let bytes = Array(try JSONEncoder().encode(envelopes))
            if let read = [RaftEnvelope](handWrittenJSON: bytes[...]) { #expect(read == envelopes) }
        }
    }

    @Test func anythingOffItsFormIsLeftToJSONDecoder() throws {
        let previous = RaftMessage.maximumNumber
        let offForm = [
            #"[{"group":"g","messages":[{"type":"heartbeat","body":{"term":1,"commit":2}}]}] "#,
            #"[{"group":"g","messages":[{"type":"heartbeat","body":{"term":1,"commit":2,"x":1}}]}]"#,
            #"[{"group":"g","messages":[{"type":"heartbeat","body":{"commit":2,"term":1}}]}]"#,
            #"[{"group":"g","messages":[{"type":"heartbeat","body":{"term":01,"commit":2}}]}]"#,
            #"[{"group":"g","messages":[{"type":"heartbeatResponse","body":{"term":1.0}}]}]"#,
            #"[{"group":"g","messages":[{"type":"gossip","body":{"term":1}}]}]"#,
            #"[{"group":"g","messages":[{"type":"appendEntries","body":{"term":1,"previousIndex":-1,"previousTerm":0,"entries":[],"commit":0}}]}]"#,
            #"[{"group":"g","messages":[{"type":"appendEntries","body":{"term":1,"previousIndex":\#(previous),"previousTerm":0,"entries":[{"term":1}],"commit":0}}]}]"#,
            #"[{"group":"g","messages":[{"type":"appendEntries","body":{"term":1,"previousIndex":0,"previousTerm":0,"entries":[{"term":1,"command":null}],"commit":0}}]}]"#,
            #"[{"group":"g","messages":[{"type":"appendEntriesResponse","body":{"term":1,"success":true,"matchIndex":1,"rejectedIndex":0,"conflictIndex":0,"conflictTerm":null}}]}]"#,
            #"[{"group":"g","messages":[]},]"#, "[", "", "{}",
        ]
        for form in offForm {
            #expect([RaftEnvelope](handWrittenJSON: Array(form.utf8)[...]) == nil, "\(form.prefix(160))")
        }
    }

    @Test func seededMutationsOfItsFormNeverCrashAndReadOnlyWhatJSONDecoderReads() throws {
        var generator = TestGenerator(seed: 35)
        let forms = try Self.arguments.map { try #require($0.handWrittenJSON) }
        for round in 0..<2_000 {
            let bytes = generator.mutated(forms[round % forms.count])
            if let read = [RaftEnvelope](handWrittenJSON: bytes[...]) {
                #expect((try? JSONDecoder().decode([RaftEnvelope].self, from: Data(bytes))) == read, "\(String(decoding: bytes, as: UTF8.self).prefix(300))")
            }
        }
    }
}
