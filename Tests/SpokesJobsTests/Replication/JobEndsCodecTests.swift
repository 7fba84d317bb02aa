import FoundationEssentials
import SpokesCluster
import SpokesClusterTestKit
import SpokesReplication
import SpokesTestKit
import Testing
@testable import SpokesJobs

/// A job batch's task ends written and read by hand (``JobEndsCodec``): JSON
/// `JSONDecoder` reads as the same ends (an earlier release's replica reads it), read back
/// whole, and nothing read by hand that `JSONDecoder` would read otherwise or refuse.
@Suite struct JobEndsCodecTests {
    /// Strings a task's output, node or failure may hold, the awkward ones included.
    static let texts = [
        "", "n1", "{\"total\":42,\"path\":\"a/b\"}", "quote \" backslash \\ slash /", "\u{0}\u{1}\u{8}\u{C}\u{1F}\n\t\r\u{7F}",
        "ü 日本 🚲 \u{2028}", "\\u0041 is not an escape here", String(repeating: "long ", count: 60),
    ]

    static func text(_ random: inout TestGenerator) -> String {
        if random.next() % 4 == 0 {
            // A few random scalars, any plane.
            return String(String.UnicodeScalarView((0..<Int(random.next() % 6)).compactMap { _ in Unicode.Scalar(UInt32(random.next() % 0x11_0000)) }))
        }
        return texts[Int(random.next() % UInt64(texts.count))]
    }

    static func number(_ random: inout TestGenerator) -> Int {
        switch random.next() % 6 {
        case 0: Int.max
        case 1: Int.min
        case 2: -Int(random.next() % 1_000)
        case 3: Int(truncatingIfNeeded: random.next())
        default: Int(random.next() % 20)
        }
    }

    /// Ends of every shape: output and node each there or nil, no failure or several,
    /// cancelled or not, odd strings, numbers at `Int`'s edges.
    static func ends(_ random: inout TestGenerator, count: Int) -> [JobMachine.Ended] {
        (0..<count).map { _ in
            let failures = (0..<Int(random.next() % 4)).map { _ in
                JobRunner.Failure(attempt: number(&random), node: text(&random), reason: text(&random), cancelled: random.next() % 2 == 0)
            }
            let output = random.next() % 3 == 0 ? nil : text(&random)
            let node = random.next() % 3 == 0 ? nil : text(&random)
            let task = number(&random)
            let outcome = JobRunner.Outcome(task: task, output: output, node: node, attempts: number(&random), failures: failures)
            return JobMachine.Ended(task: task, end: TaskJobReport.TaskEnd(outcome))
        }
    }

    static func written(_ ends: [JobMachine.Ended]) -> [UInt8] {
        var out: [UInt8] = []
        JobEndsCodec.write(ends, to: &out)
        return out
    }

    /// What `JSONDecoder` makes of `bytes`, or nil when it refuses them.
    static func decodedByCodable(_ bytes: [UInt8]) -> [JobMachine.Ended]? {
        try? JSONDecoder().decode([JobMachine.Ended].self, from: Data(bytes))
    }

    @Test func endsAreWrittenAsJSONDecoderReadsThemAndReadBackWhole() throws {
        var random = TestGenerator(seed: 33)
        var codableReadByHand = 0
        for round in 0..<600 {
            let ends = Self.ends(&random, count: round % 25)
            let hand = Self.written(ends)
            #expect(Self.decodedByCodable(hand) == ends, "an earlier release's replica reads it: round \(round): \(String(decoding: hand, as: UTF8.self))")
            #expect(JobEndsCodec.readByHand(hand[...]) == ends, "round \(round)")
            // `JSONEncoder` orders keys differently from one encoding to the next: its text
            // is read by hand when it happens to be in the declared order, else by `JSONDecoder`.
            let codable = try JSONEncoder().encode(ends)
            if let byHand = JobEndsCodec.readByHand(Array(codable)[...]) {
                codableReadByHand += 1
                #expect(byHand == ends)
            }
            #expect(try JobEndsCodec.decode(Array(codable)[...]) == ends, "a batch of an earlier release: round \(round)")
        }
        #expect(codableReadByHand > 0, "the empty list at least")
    }

    /// In place within a command, as the machine reads a batch's member.
    @Test func endsAreReadInPlaceAndACutArrayIsNone() {
        var random = TestGenerator(seed: 34)
        for round in 0..<200 {
            let ends = Self.ends(&random, count: 1 + round % 10)
            let command = Array(#"{"epoch":3,"ends":"#.utf8) + Self.written(ends) + Array("}".utf8)
            let start = #"{"epoch":3,"ends":"#.utf8.count, end = command.count - 1
            #expect(JobEndsCodec.readByHand(command[start..<end]) == ends)
            #expect(JobEndsCodec.readByHand(command[start..<end - 1]) == nil)
            #expect(JobEndsCodec.readByHand(command[start..<end + 1]) == nil, "what follows the array is not read as part of it")
        }
    }

    /// Other spellings of ends go to `JSONDecoder`, which gives the same value (or the
    /// same refusal) as before.
    @Test func otherSpellingsAreLeftToJSONDecoder() throws {
        let handForm = #"[{"task":1,"end":{"output":"4","node":"n1","attempts":2,"failures":[{"attempt":1,"node":"n2","reason":"lost","cancelled":false}]}}]"#
        let expected = try #require(JobEndsCodec.readByHand(Array(handForm.utf8)[...]))
        #expect(expected == Self.decodedByCodable(Array(handForm.utf8)))
        let others = [
            #"[ {"task":1,"end":{"output":"4","node":"n1","attempts":2,"failures":[{"attempt":1,"node":"n2","reason":"lost","cancelled":false}]}}]"#,
            #"[{"end":{"output":"4","node":"n1","attempts":2,"failures":[{"attempt":1,"node":"n2","reason":"lost","cancelled":false}]},"task":1}]"#,
            #"[{"task":1,"end":{"node":"n1","output":"4","attempts":2,"failures":[{"node":"n2","attempt":1,"reason":"lost","cancelled":false}]}}]"#,
            #"[{"task":1.0,"end":{"output":"4","node":"n1","attempts":2,"failures":[{"attempt":1,"node":"n2","reason":"lost","cancelled":false}]}}]"#,
        ]
        for other in others {
            let bytes = Array(other.utf8)
            #expect(JobEndsCodec.readByHand(bytes[...]) == nil, "\(other)")
            #expect(try JobEndsCodec.decode(bytes[...]) == Self.decodedByCodable(bytes), "\(other)")
        }
        // Escapes the writer does not use (`JSONEncoder` writes `\/`) are strings' own: read by hand, alike.
        let escapes = Array(#"[{"task":1,"end":{"output":"\u0034","node":"n\/1","attempts":2,"failures":[]}}]"#.utf8)
        #expect(JobEndsCodec.readByHand(escapes[...]) == Self.decodedByCodable(escapes))
        #expect(JobEndsCodec.readByHand(escapes[...])?.first?.end.node == "n/1")
        // Nil written as null, an extra key: read as `JSONDecoder` reads them.
        let null = Array(#"[{"task":1,"end":{"output":null,"attempts":1,"failures":[]}}]"#.utf8)
        #expect(JobEndsCodec.readByHand(null[...]) == nil)
        #expect(try JobEndsCodec.decode(null[...]).first?.end.output == nil)
        let extra = Array(#"[{"task":1,"end":{"attempts":1,"failures":[],"more":0}}]"#.utf8)
        #expect(JobEndsCodec.readByHand(extra[...]) == nil)
        #expect(try JobEndsCodec.decode(extra[...]) == Self.decodedByCodable(extra))
        // Refused alike: a failure without `cancelled`, a number past `Int`, a negative zero, no array.
        for refused in [
            #"[{"task":1,"end":{"attempts":1,"failures":[{"attempt":1,"node":"n2","reason":"lost"}]}}]"#,
            #"[{"task":9223372036854775808,"end":{"attempts":1,"failures":[]}}]"#, #"{"task":1}"#, "", "[",
        ] {
            let bytes = Array(refused.utf8)
            #expect(JobEndsCodec.readByHand(bytes[...]) == nil, "\(refused)")
            #expect(Self.decodedByCodable(bytes) == nil && (try? JobEndsCodec.decode(bytes[...])) == nil, "\(refused)")
        }
        let negativeZero = Array(#"[{"task":-0,"end":{"attempts":1,"failures":[]}}]"#.utf8)
        #expect(JobEndsCodec.readByHand(negativeZero[...]) == nil)
        #expect((try? JobEndsCodec.decode(negativeZero[...])) == Self.decodedByCodable(negativeZero))
    }

    /// Seeded mutations and every cut of real ends: whatever the hand reader reads is what
    /// `JSONDecoder` reads; it never reads what `JSONDecoder` refuses, and never traps; and
    /// the machine's read (by hand, else `JSONDecoder`) answers as `JSONDecoder` alone.
    @Test func mutatedOrCutEndsAreReadAsJSONDecoderReadsThemOrLeftToIt() {
        var random = TestGenerator(seed: 7)
        var readByHand = 0
        for _ in 0..<3_000 {
            let text = Self.written(Self.ends(&random, count: 1 + Int(random.next() % 4)))
            let mutated = random.mutated(text)
            let codable = Self.decodedByCodable(mutated)
            if let hand = JobEndsCodec.readByHand(mutated[...]) {
                readByHand += 1
                #expect(codable == hand, "\(String(decoding: mutated, as: UTF8.self))")
            }
            #expect((try? JobEndsCodec.decode(mutated[...])) == codable)
        }
        #expect(readByHand > 0, "some mutations (a digit or a letter changed) still read")
        let text = Self.written(Self.ends(&random, count: 3))
        for cut in 0..<text.count {
            #expect(JobEndsCodec.readByHand(text[..<cut]) == nil)
            #expect((try? JobEndsCodec.decode(text[..<cut])) == nil)
        }
    }

    /// Two replicas, one fed the hand-written batch, one the `JSONEncoder` form an earlier
    /// release committed: the same results and the same state.
    @Test func theMachineAppliesAHandWrittenBatchAsItDidAJSONEncodedOne() throws {
        var random = TestGenerator(seed: 35)
        let ends = Self.ends(&random, count: 12).enumerated().map { index, ended in JobMachine.Ended(task: index % 3, end: ended.end) }
        let codable = #"{"epoch":0,"ends":"# + String(decoding: try JSONEncoder().encode(ends), as: UTF8.self) + "}"
        var hand = JobMachine(), other = JobMachine()
        #expect(hand.apply(JobMachine.start(JobMachineTests.spec)) == JobMachine.applied)
        #expect(other.apply(JobMachine.start(JobMachineTests.spec)) == JobMachine.applied)
        #expect(hand.apply(JobMachine.batch(epoch: 0, events: nil, ends: ends)) == JobMachine.applied)
        #expect(other.apply(codable) == JobMachine.applied)
        #expect(hand.snapshot() == other.snapshot() && hand.ends.count == 3)
        #expect(hand.ends[0] == ends[0].end, "the first committed end of a task wins")
        let outOfRange = JobMachine.batch(epoch: 0, events: nil, ends: [JobMachine.Ended(task: 3, end: ends[0].end)])
        #expect(hand.apply(outOfRange) == "error: a task out of range")
    }
}
