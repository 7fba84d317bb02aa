@testable import SpokesJobs
import Foundation
import SpokesTestKit
import Testing
@testable import SpokesCluster

/// The journal of running jobs on real files: what a restart finds, and what a crash
/// left half-written.
@Suite struct TaskJobJournalTests {
    let folder: TemporaryDirectory
    let journal: TaskJobJournal

    init() throws {
        folder = try TemporaryDirectory()
        journal = TaskJobJournal(dataDirectory: folder.path)
    }

    static let spec = TaskJobSpec(id: "map-00000001", kind: "test.kind", schema: nil, title: "3 x test.kind", inputs: ["1", "2", "3"], deadline: 5, retries: 1)

    static func end(_ output: String) -> TaskJobReport.TaskEnd {
        TaskJobReport.TaskEnd(JobRunner.Outcome(task: 0, output: output, node: "n1", attempts: 1, failures: []))
    }

    @Test func aJobThatDidNotFinishIsFoundWithTheEndsItHadAndAFinishedOneIsNot() throws {
        try journal.begin(Self.spec)
        try journal.record([(0, Self.end("1")), (2, Self.end("9"))], of: Self.spec.id)
        var other = Self.spec
        other.id = "map-00000002"
        try journal.begin(other)
        journal.finish(other.id)
        let found = TaskJobJournal(dataDirectory: folder.path).unfinished()
        #expect(found.map(\.spec) == [Self.spec])
        #expect(found.first?.ends.keys.sorted() == [0, 2] && found.first?.ends[2]?.output == "9")
    }

    @Test func aLineACrashCutShortIsDroppedAndSoIsWhatFollowsAnUnreadableLine() throws {
        try journal.begin(Self.spec)
        try journal.record([(0, Self.end("1"))], of: Self.spec.id)
        let path = journal.directory + "/\(Self.spec.id).jsonl"
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data(#"{"task": 1, "end": {"out"#.utf8))
        try handle.close()
        #expect(journal.unfinished().first?.ends.keys.sorted() == [0], "the torn line is not read")
        var spec = Self.spec
        spec.id = "map-00000003"
        try journal.begin(spec)
        try journal.record([(0, Self.end("1"))], of: spec.id)
        let other = try #require(FileHandle(forWritingAtPath: journal.directory + "/\(spec.id).jsonl"))
        other.seekToEndOfFile()
        other.write(Data("garbage\n".utf8))
        try other.close()
        try journal.record([(1, Self.end("4"))], of: spec.id)
        #expect(journal.unfinished().first { $0.spec.id == spec.id }?.ends.keys.sorted() == [0], "nothing after a line that is not an end")
    }

    @Test func aFileThatIsNotAJournalIsLeftAloneAndATaskOutOfRangeIsNotRead() throws {
        try FileManager.default.createDirectory(atPath: journal.directory, withIntermediateDirectories: true)
        try Data("not a spec\n".utf8).write(to: URL(fileURLWithPath: journal.directory + "/map-99999999.jsonl"))
        try journal.begin(Self.spec)
        try journal.record([(7, Self.end("1"))], of: Self.spec.id)
        let found = journal.unfinished()
        #expect(found.map(\.spec.id) == [Self.spec.id] && found.first?.ends.isEmpty == true)
    }
}
