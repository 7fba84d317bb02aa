import SpokesReplication
import Testing
@testable import SpokesBikes

/// A bike job's spec text is read once per process: again it returns what was read, a
/// text that does not read throws every time, and only the newest few are kept.
@Suite struct DecodedBikeJobsTests {
    static func text(users: Int) -> String {
        MachineText.encode(BikeJob(network: .synthetic(stations: 3, bikes: 2, emptySlots: 2), options: SimulationOptions(users: users, paths: 1)))
    }

    @Test func aTextReadOnceIsNotReadAgain() throws {
        let memo = DecodedBikeJobs(keeping: 2)
        var reads = 0
        let read = { (text: String) throws -> BikeJob in
            reads += 1
            return try MachineText.decode(BikeJob.self, from: text)
        }
        let text = Self.text(users: 7)
        let first = try memo.job(from: text, read: read)
        let again = try memo.job(from: String(decoding: Array(text.utf8), as: UTF8.self), read: read)
        #expect(reads == 1, "an equal text (other storage) is found")
        #expect(first.id == again.id && again.options.users == 7)
    }

    @Test func aTextThatDoesNotReadThrowsEveryTime() {
        let memo = DecodedBikeJobs(keeping: 2)
        var reads = 0
        for _ in 0..<2 {
            #expect(throws: (any Error).self) {
                try memo.job(from: "{\"id\":1}") { text in
                    reads += 1
                    return try MachineText.decode(BikeJob.self, from: text)
                }
            }
        }
        #expect(reads == 2)
    }

    @Test func onlyTheNewestAreKept() throws {
        let memo = DecodedBikeJobs(keeping: 2)
        var reads = 0
        let read = { (text: String) throws -> BikeJob in
            reads += 1
            return try MachineText.decode(BikeJob.self, from: text)
        }
        let texts = [Self.text(users: 1), Self.text(users: 2), Self.text(users: 3)]
        for text in texts { _ = try memo.job(from: text, read: read) }
        _ = try memo.job(from: texts[2], read: read)
        _ = try memo.job(from: texts[1], read: read)
        #expect(reads == 3, "the two newest are kept")
        _ = try memo.job(from: texts[0], read: read)
        #expect(reads == 4, "the oldest was let go")
    }
}
