import Foundation
import SpokesCluster
import SpokesTestKit
import Testing
@testable import SpokesBikes

/// A bike job's batches of station moves by hand against `Codable`, pure: what
/// `StationMove.handWrittenJSON(of:)` writes, `JSONDecoder` (an earlier release's desk)
/// reads as the same moves; what it reads is what `JSONDecoder` reads; anything off its
/// form is left to `JSONDecoder`.
@Suite struct StationMoveHandWrittenTests {
    static let batches: [[StationMove]] = [
        [],
        [StationMove(station: 0, take: true, move: Move(user: 0, attempt: 1, step: 1))],
        [StationMove(station: 317, take: false, move: Move(user: 15_999, attempt: 3, step: 40)),
         StationMove(station: 2, take: true, move: Move(user: 7, attempt: 1, step: 2))],
        [StationMove(station: .max, take: false, move: Move(user: .min, attempt: -1, step: .max))],
        (0..<200).map { StationMove(station: $0 % 13, take: $0 % 2 == 0, move: Move(user: $0, attempt: 1 + $0 % 3, step: $0 / 7)) },
    ]

    @Test func whatItWritesJSONDecoderReadsAsTheSameMovesAndSoDoesIt() throws {
        for batch in Self.batches {
            let bytes = try #require(batch.handWrittenJSON)
            #expect(try JSONDecoder().decode([StationMove].self, from: Data(bytes)) == batch, "\(String(decoding: bytes, as: UTF8.self).prefix(200))")
            #expect([StationMove](handWrittenJSON: bytes[...]) == batch)
        }
    }

    @Test func whatJSONEncoderWritesIsReadTheSameOrLeftToJSONDecoder() throws {
        for batch in Self.batches {
            let bytes = Array(try JSONEncoder().encode(batch))
            if let read = [StationMove](handWrittenJSON: bytes[...]) { #expect(read == batch) }
        }
    }

    @Test func anythingOffItsFormIsLeftToJSONDecoder() {
        let offForm = [
            #"[{"station":1,"take":true,"move":{"user":2,"attempt":1,"step":3}}] "#,
            #"[{"take":true,"station":1,"move":{"user":2,"attempt":1,"step":3}}]"#,
            #"[{"station":1,"take":true,"move":{"user":2,"attempt":1,"step":3,"x":0}}]"#,
            #"[{"station":1.0,"take":true,"move":{"user":2,"attempt":1,"step":3}}]"#,
            #"[{"station":01,"take":true,"move":{"user":2,"attempt":1,"step":3}}]"#,
            #"[{"station":1,"take":1,"move":{"user":2,"attempt":1,"step":3}}]"#,
            #"[{"station":99999999999999999999,"take":true,"move":{"user":2,"attempt":1,"step":3}}]"#,
            #"[{"station":1,"take":true,"move":{"user":2,"attempt":1,"step":3}},]"#,
            "[", "", "{}", "[null]",
        ]
        for form in offForm {
            #expect([StationMove](handWrittenJSON: Array(form.utf8)[...]) == nil, "\(form)")
        }
    }

    @Test func seededMutationsOfItsFormNeverCrashAndReadOnlyWhatJSONDecoderReads() throws {
        var generator = TestGenerator(seed: 33)
        let forms = try Self.batches.map { try #require($0.handWrittenJSON) }
        for round in 0..<2_000 {
            let bytes = generator.mutated(forms[round % forms.count])
            if let read = [StationMove](handWrittenJSON: bytes[...]) {
                #expect((try? JSONDecoder().decode([StationMove].self, from: Data(bytes))) == read, "\(String(decoding: bytes, as: UTF8.self).prefix(200))")
            }
        }
    }

    /// The desk's call carries the batch by hand: the invocation encoder takes the hand
    /// form for the argument.
    @Test func aBatchIsAHandWrittenArgument() {
        let batch = Self.batches[2]
        #expect((batch as Any as? any HandWrittenArgument)?.handWrittenJSON == StationMove.handWrittenJSON(of: batch))
    }

    static let outcomes: [[StationMove.Outcome]] = [[], [.done(true)], [.done(false), .done(true), .done(false)], (0..<300).map { .done($0 % 3 == 0) }]

    @Test func outcomesItWritesJSONDecoderReadsTheSameAndSoDoesIt() throws {
        for batch in Self.outcomes {
            let bytes = try #require(batch.handWrittenJSON)
            #expect(try JSONDecoder().decode([StationMove.Outcome].self, from: Data(bytes)) == batch)
            #expect([StationMove.Outcome](handWrittenJSON: bytes[...]) == batch)
            let encoded = Array(try JSONEncoder().encode(batch))
            if let read = [StationMove.Outcome](handWrittenJSON: encoded[...]) { #expect(read == batch) }
        }
    }

    @Test func outcomesWithARefusalAreLeftToJSONEncoderAndMutationsReadOnlyWhatJSONDecoderReads() throws {
        #expect([StationMove.Outcome.done(true), .refused(.jobEnded(user: 9))].handWrittenJSON == nil)
        var generator = TestGenerator(seed: 34)
        let forms = try Self.outcomes.map { try #require($0.handWrittenJSON) }
        for round in 0..<2_000 {
            let bytes = generator.mutated(forms[round % forms.count])
            if let read = [StationMove.Outcome](handWrittenJSON: bytes[...]) {
                #expect((try? JSONDecoder().decode([StationMove.Outcome].self, from: Data(bytes))) == read, "\(String(decoding: bytes, as: UTF8.self).prefix(200))")
            }
        }
    }
}
