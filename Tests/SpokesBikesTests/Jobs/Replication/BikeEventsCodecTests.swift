import Foundation
import SpokesReplication
import SpokesTestKit
import Testing
@testable import SpokesBikes

/// The bike job's batch of events written and read by hand: JSON `JSONDecoder` reads as
/// the same command (an earlier release's replica reads it), read back whole, and nothing
/// read by hand that `JSONDecoder` would read otherwise.
@Suite struct BikeEventsCodecTests {
    /// `JSONEncoder`'s form of the command, as `BikeJobMachine` wrote it before.
    private struct Command: Codable {
        var job: BikeJob?
        var takeOver: Int?
        var events: [BikeJobBook.Event]?
        var epoch: Int?
    }

    static func events(_ random: inout TestGenerator, count: Int) -> [BikeJobBook.Event] {
        let endings: [SimulationResult.Ending] = [.finishedPaths, .reachedGoal, .gaveUp, .cancelled]
        return (0..<count).map { _ in
            let user = Int(random.next() % 5_000), attempt = Int(random.next() % 4)
            switch random.next() % 4 {
            case 0: return .attempt(user: user, attempt: attempt)
            case 1: return .move(Move(user: user, attempt: attempt, step: Int(random.next() % 400)), station: Int(random.next() % 300), take: random.next() % 2 == 0)
            case 2: return .accepted(user: user, attempt: attempt, ending: endings[Int(random.next() % 4)])
            default:
                let node: String? = random.next() % 2 == 0 ? nil : "n\(random.next() % 9)"
                let reasons = (0..<Int(random.next() % 3)).map { "attempt \($0) on \"n1\" timed out\n\tafter 5 s ü" }
                return .ended(user: user, BikeJobBook.UserEnd(ending: endings[Int(random.next() % 4)], node: node, attempts: attempt + 1, reasons: reasons))
            }
        }
    }

    @Test func aBatchIsWrittenAsJSONDecoderReadsItAndReadBackWhole() throws {
        var random = TestGenerator(seed: 33)
        for round in 0..<300 {
            let events = Self.events(&random, count: round % 40)
            let epoch = Int(random.next() % 7)
            let hand = BikeEventsCodec.encode(events, epoch: epoch)
            // `JSONEncoder` orders keys differently from one encoding to the next: its
            // text is read by hand when it happens to be in the fixed order, else left.
            let codable = String(decoding: try JSONEncoder().encode(Command(events: events, epoch: epoch)), as: UTF8.self)
            if let byHand = BikeEventsCodec.decode(codable) { #expect(byHand.events == events && byHand.epoch == epoch) }
            let read = try #require(BikeEventsCodec.decode(hand), "round \(round): \(hand)")
            #expect(read.events == events && read.epoch == epoch)
            let decoded = try JSONDecoder().decode(Command.self, from: Data(hand.utf8))
            #expect(decoded.events == events && decoded.epoch == epoch, "an earlier release's replica reads it")
        }
    }

    /// The events alone, as a bike job's run hands them to the job layer: the array
    /// `JSONDecoder` reads, read back whole, in place within a larger command; and the
    /// book applies it all or nothing.
    @Test func eventsAloneAreWrittenAsJSONDecoderReadsThemAndReadBackInPlace() throws {
        var random = TestGenerator(seed: 34)
        for round in 0..<300 {
            let events = Self.events(&random, count: round % 40)
            let hand = BikeEventsCodec.encodeEvents(events)
            #expect(try JSONDecoder().decode([BikeJobBook.Event].self, from: Data(hand.utf8)) == events, "round \(round): \(hand)")
            let before = Array("{\"epoch\":3,\"events\":".utf8)
            let command = before + Array(hand.utf8) + Array("}".utf8)
            let start = before.count, end = command.count - 1
            #expect(BikeEventsCodec.decodeEvents(command[start..<end]) == events, "read in place: round \(round)")
            #expect(BikeEventsCodec.decodeEvents(command[start..<end - 1]) == nil, "a cut array is no array")
        }
        var book = BikeJobBook(users: 2)
        let halfGood = BikeEventsCodec.encodeEvents([.attempt(user: 0, attempt: 1), .attempt(user: 9, attempt: 1)])
        #expect(book.apply(events: Array(halfGood.utf8)[...]) == "event 2 of 2 did not apply", "no user 9")
        #expect(book.entries[0].attempt == 0, "the refused batch changed nothing, its first event neither")
        let good = BikeEventsCodec.encodeEvents([.attempt(user: 0, attempt: 1)])
        #expect(book.apply(events: Array(good.utf8)[...]) == nil && book.entries[0].attempt == 1)
        #expect(book.apply(events: Array("not events".utf8)[...]) == "not a list of bike job events")
    }

    @Test func otherCommandsAndOtherSpellingsAreLeftToJSONDecoder() {
        #expect(BikeEventsCodec.decode(#"{"takeOver":2}"#) == nil)
        #expect(BikeEventsCodec.decode(#"{"epoch":0,"events":[]}"#) == nil, "keys in another order")
        #expect(BikeEventsCodec.decode(#"{"events":[], "epoch":0}"#) == nil, "a space")
        #expect(BikeEventsCodec.decode(#"{"events":[],"epoch":0}"#)?.events == [])
        #expect(BikeEventsCodec.decode(#"{"events":[{"attempt":{"user":1,"attempt":2,"x":3}}],"epoch":0}"#) == nil, "an unknown field")
    }

    /// Seeded mutations of real batches: whatever the hand reader reads is what
    /// `JSONDecoder` reads; it never reads what `JSONDecoder` refuses, and never traps.
    @Test func aMutatedBatchIsReadAsJSONDecoderReadsItOrLeftToIt() throws {
        var random = TestGenerator(seed: 7)
        var readByHand = 0
        for _ in 0..<2_000 {
            let text = BikeEventsCodec.encode(Self.events(&random, count: 1 + Int(random.next() % 6)), epoch: Int(random.next() % 3))
            let mutated = String(decoding: random.mutated(Array(text.utf8)), as: UTF8.self)
            guard let hand = BikeEventsCodec.decode(mutated) else { continue }
            readByHand += 1
            let decoded = try JSONDecoder().decode(Command.self, from: Data(mutated.utf8))
            #expect(decoded.events == hand.events && decoded.epoch == hand.epoch, "\(mutated)")
        }
        #expect(readByHand > 0, "some mutations (a digit changed) still read")
    }

    @Test func theMachineAppliesAHandWrittenBatchAsItDidAJSONEncodedOne() throws {
        var machine = BikeJobMachine()
        let job = BikeJobReplicationTests.job
        #expect(machine.apply(BikeJobMachine.start(job)) == BikeJobMachine.applied)
        let events: [BikeJobBook.Event] = [.attempt(user: 0, attempt: 1)]
        let codable = String(decoding: try JSONEncoder().encode(Command(events: events, epoch: 0)), as: UTF8.self)
        var other = machine
        #expect(machine.apply(BikeJobMachine.record(events, epoch: 0)) == BikeJobMachine.applied)
        #expect(other.apply(codable) == BikeJobMachine.applied)
        #expect(machine.book == other.book && machine.book?.entries[0].attempt == 1)
    }
}
