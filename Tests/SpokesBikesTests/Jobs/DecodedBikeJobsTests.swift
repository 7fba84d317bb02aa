import SpokesReplication
import Testing
@testable import SpokesBikes

/// A bike job's spec text is read once per process: again it returns what was read, a
/// text that does not read throws every time, and only the newest few are kept.
@Suite struct DecodedBikeJobsTests {
    static func text(users: Int) -> String {
        MachineText.encode(BikeJob(network: .synthetic(stations: 3, bikes: 2, emptySlots: 2), options: SimulationOptions(users: users, paths: 1)))
    }

    /// A memo of 2 and how many times it read a text.
    final class Counted {
        let memo = DecodedBikeJobs(keeping: 2)
        var reads = 0

        func job(from text: String) throws -> BikeJob {
            try memo.job(from: text) { text in
                reads += 1
                return try MachineText.decode(BikeJob.self, from: text)
            }
        }
    }

    @Test func aTextReadOnceIsNotReadAgain() throws {
        let counted = Counted()
        let text = Self.text(users: 7)
        let first = try counted.job(from: text)
        let again = try counted.job(from: String(decoding: Array(text.utf8), as: UTF8.self))
        #expect(counted.reads == 1, "an equal text (other storage) is found")
        #expect(first.id == again.id && again.options.users == 7)
    }

    @Test func aTextThatDoesNotReadThrowsEveryTime() {
        let counted = Counted()
        for _ in 0..<2 {
            #expect(throws: (any Error).self) { try counted.job(from: "{\"id\":1}") }
        }
        #expect(counted.reads == 2)
    }

    @Test func onlyTheNewestAreKept() throws {
        let counted = Counted()
        let texts = [Self.text(users: 1), Self.text(users: 2), Self.text(users: 3)]
        for text in texts { _ = try counted.job(from: text) }
        _ = try counted.job(from: texts[2])
        _ = try counted.job(from: texts[1])
        #expect(counted.reads == 3, "the two newest are kept")
        _ = try counted.job(from: texts[0])
        #expect(counted.reads == 4, "the oldest was let go")
    }
}
