import Foundation
import Glibc
import SpokesCluster
import SpokesJobs
import SpokesConcurrency
@testable import SpokesJobs
import Synchronization
import Testing
@testable import SpokesBikes

/// The job store on real files in a temporary folder, with a disk that can be made full.
@Suite struct JobStoreTests {
    /// A folder of its own for each test.
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spokes-store-\(UUID().uuidString)").path

    /// The machine's disk until its space runs out, then failing as a full disk does
    /// (the bytes that fit are written, then `ENOSPC`); its flushes can be made to fail.
    final class FillingDisk: SpokesConcurrency.Disk {
        private let real = RealDisk()
        /// Bytes that still fit (nil: no limit).
        let space = Mutex<Int?>(nil)
        /// The `errno` the next flushes fail with (0: they succeed).
        let flushError = Mutex<Int32>(0)

        func append(_ bytes: [UInt8], to path: String) throws(DiskError) {
            let allowed = space.withLock { $0.map { min($0, bytes.count) } ?? bytes.count }
            try real.append(Array(bytes.prefix(allowed)), to: path)
            space.withLock { space in space = space.map { $0 - allowed } }
            if allowed < bytes.count { throw DiskError("write", path, code: ENOSPC) }
        }

        func sync(_ path: String) throws(DiskError) {
            let error = flushError.withLock { $0 }
            if error != 0 { throw DiskError("flush", path, code: error) }
            try real.sync(path)
        }

        func read(_ path: String) throws(DiskError) -> [UInt8]? { try real.read(path) }
        func read(_ path: String, at offset: Int, count: Int) throws(DiskError) -> [UInt8] { try real.read(path, at: offset, count: count) }
        func status(of path: String) throws(DiskError) -> DiskFileStatus? { try real.status(of: path) }
        func truncate(_ path: String, to length: Int) throws(DiskError) { try real.truncate(path, to: length) }
        func replace(_ path: String, with bytes: [UInt8], mode: UInt32) throws(DiskError) { try real.replace(path, with: bytes, mode: mode) }
        func rename(_ path: String, to newPath: String) throws(DiskError) { try real.rename(path, to: newPath) }
        func withLock<T>(_ path: String, exclusive: Bool, _ body: () throws -> T) throws -> T { try real.withLock(path, exclusive: exclusive, body) }
        func remove(_ path: String) throws(DiskError) { try real.remove(path) }
        func removeTree(_ path: String) throws(DiskError) { try real.removeTree(path) }
        func makeDirectory(_ path: String) throws(DiskError) { try real.makeDirectory(path) }
        func syncDirectory(_ path: String) throws(DiskError) { try real.syncDirectory(path) }
        func contents(ofDirectory path: String) throws(DiskError) -> [String]? { try real.contents(ofDirectory: path) }
    }

    /// What the store logged.
    final class Log: Sendable {
        let lines = Mutex<[String]>([])
        func record(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    static func report(_ job: String, users: Int = 3, cancelled: Bool = false) -> SimulationReport {
        let network = Network.synthetic(stations: 2, bikes: 3, emptySlots: 2)
        let options = SimulationOptions(users: users, paths: 1, seed: 1)
        var report = SimulationReport(
            network: network, finalStations: network.stations, options: options,
            results: (0..<users).map { SimulationResult(user: $0) }, wallTime: 0.5, cancelled: cancelled, finished: Date(timeIntervalSince1970: 1_800_000_000))
        report.job = job
        return report
    }

    func store(keep: Int = 1000, disk: FillingDisk = FillingDisk(), log: Log = Log()) -> JobStore {
        JobStore(directory: directory, keep: keep, disk: disk, log: log.record)
    }

    var fileSize: Int {
        ((try? FileManager.default.attributesOfItem(atPath: directory + "/jobs.jsonl"))?[.size] as? Int) ?? -1
    }

    func appendRaw(_ text: String) throws {
        let handle = try #require(FileHandle(forWritingAtPath: directory + "/jobs.jsonl"))
        defer { try? handle.close() }
        handle.seekToEndOfFile()
        handle.write(Data(text.utf8))
    }

    /// A finished job of 3 tasks of `test.kind`: two outputs and one failure.
    static func taskJob(_ job: String) -> TaskJobReport {
        let ends = [
            JobRunner.Outcome(task: 0, output: "4", node: "n1", attempts: 1, failures: []),
            JobRunner.Outcome(task: 1, output: nil, node: nil, attempts: 2, failures: [
                JobRunner.Failure(attempt: 1, node: "n1", reason: "too large"), JobRunner.Failure(attempt: 2, node: "n2", reason: "too large"),
            ]),
            JobRunner.Outcome(task: 2, output: "9", node: "n2", attempts: 1, failures: []),
        ]
        return TaskJobReport(
            job: job, kind: "test.kind", schema: nil, title: "3 x test.kind", coordinator: "n1", inputs: ["2", "5000", "3"],
            tasks: ends.map(TaskJobReport.TaskEnd.init), wallTime: 0.25, cancelReason: nil)
    }

    /// A stalled job's summary keeps why across the wire: the client that follows it says
    /// so (it lost the reason once, and waited as for a running job: issue 29 §1.8).
    @Test func aStalledSummaryKeepsItsReasonWhenEncoded() throws {
        let summary = JobStore.Summary(
            job: "job-1", state: .stalled, finished: nil, coordinator: "solo", title: "bikemi", tasks: 3, succeeded: 0,
            failed: 0, cancelled: 0, retries: 0, wallTime: 0, stalledReason: "its replica on solo stopped (disk full)")
        let decoded = try JSONDecoder().decode(JobStore.Summary.self, from: JSONEncoder().encode(summary))
        #expect(decoded.state == .stalled && decoded.stalledReason == "its replica on solo stopped (disk full)")
        #expect(decoded.isUnfinished)
    }

    /// The fields fit every job (title, tasks, succeeded, ...), and are written with the
    /// keys release 0.1 wrote, so older stores and nodes read them unchanged.
    @Test func aSummaryIsWrittenWithTheKeysEarlierReleasesRead() throws {
        let summary = JobStore.Summary(
            job: "map-1", state: .completed, finished: nil, coordinator: "n1", title: "squares", tasks: 4, succeeded: 3,
            failed: 1, cancelled: 0, retries: 2, wallTime: 1.5, kind: "test.kind")
        let object = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(summary)) as? [String: Any])
        #expect(object["network"] as? String == "squares" && object["users"] as? Int == 4)
        #expect(object["completedUsers"] as? Int == 3 && object["failedUsers"] as? Int == 1 && object["cancelledUsers"] as? Int == 0)
        #expect(try JSONDecoder().decode(JobStore.Summary.self, from: JSONEncoder().encode(summary)) == summary)
    }

    @Test func aJobOfTasksIsStoredBesideBikeJobsListedWithItsKindAndReadBackWhole() throws {
        let store = store()
        try store.append(Self.report("job-1"), coordinator: "n1")
        try store.append(Self.taskJob("map-1"))
        try store.append(Self.report("job-2"), coordinator: "n1")
        // A second store on the same file reads it from scratch.
        let reader = self.store()
        let summaries = try reader.summaries()
        #expect(summaries.map(\.job) == ["job-1", "map-1", "job-2"])
        let map = try #require(summaries.first { $0.job == "map-1" })
        #expect(map.kind == "test.kind" && map.state == .failed && map.tasks == 3 && map.succeeded == 2 && map.failed == 1 && map.retries == 1)
        #expect(summaries.filter { $0.kind == nil }.count == 2, "bike jobs have no kind")
        var expected = Self.taskJob("map-1")
        expected.stored = true
        #expect(try reader.taskJobReport(of: "map-1") == expected)
        #expect(try reader.report(of: "map-1") == nil && reader.taskJobReport(of: "job-1") == nil, "each reads only its own kind of record")
        #expect(try reader.report(of: "job-2")?.job == "job-2")
    }

    @Test func aFullDiskLeavesTheFileAsItWasAndSaysWhyInWords() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let disk = FillingDisk()
        let log = Log()
        let store = store(disk: disk, log: log)
        try store.append(Self.report("job-1"), coordinator: "n1")
        let before = fileSize
        disk.space.withLock { $0 = 100 }  // room for part of the next line only
        #expect {
            try store.append(Self.report("job-2"), coordinator: "n1")
        } throws: { error in
            "\(error)" == "cannot write \(directory)/jobs.jsonl: no space left on device"
        }
        #expect(fileSize == before, "the partial line was taken back")
        disk.space.withLock { $0 = nil }  // space came back
        try store.append(Self.report("job-3"), coordinator: "n1")
        let fresh = JobStore(directory: directory, log: log.record)
        #expect(try fresh.summaries().map(\.job) == ["job-1", "job-3"])
        #expect(try fresh.report(of: "job-3")?.job == "job-3", "the record after the full disk reads whole")
        #expect(log.all.isEmpty, "no corrupt line: \(log.all)")
    }

    @Test func aRecordThatCannotBeFlushedIsNotStored() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let disk = FillingDisk()
        let store = store(disk: disk)
        try store.append(Self.report("job-1"), coordinator: "n1")
        let before = fileSize
        disk.flushError.withLock { $0 = EIO }
        #expect {
            try store.append(Self.report("job-2"), coordinator: "n1")
        } throws: { error in
            "\(error)" == "cannot flush \(directory)/jobs.jsonl: input/output error"
        }
        #expect(fileSize == before)
        #expect(try store.summaries().map(\.job) == ["job-1"])
    }

    @Test func aFolderThatCannotBeMadeIsNamedWithTheCause() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("spokes-file-\(UUID().uuidString)").path
        try Data().write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let store = JobStore(directory: file + "/data")
        #expect {
            try store.append(Self.report("job-1"), coordinator: "n1")
        } throws: { error in
            "\(error)" == "cannot create the folder \(file)/data: not a directory"
        }
        #expect {
            try store.summaries()
        } throws: { error in
            "\(error)" == "cannot read \(file)/data/jobs.jsonl: not a directory"
        }
    }

    @Test func aLineLeftPartialByACrashIsReportedOnceAndNeverGluesOntoTheNextRecord() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = Log()
        let store = store(log: log)
        try store.append(Self.report("job-1"), coordinator: "n1")
        // A crash mid-write: the start of a record, no newline.
        let line = try JobStore.line(for: Self.report("job-2"), coordinator: "n1", finished: Date())
        try appendRaw(String(decoding: line.prefix(line.count / 2), as: UTF8.self))
        #expect(try store.summaries().map(\.job) == ["job-1"])
        try store.append(Self.report("job-3"), coordinator: "n1")
        #expect(try store.summaries().map(\.job) == ["job-1", "job-3"])
        #expect(try store.report(of: "job-3")?.job == "job-3")
        #expect(try store.report(of: "job-2") == nil)
        #expect(log.all.count == 1, "\(log.all)")
        #expect(log.all.first?.hasPrefix("job store \(directory)/jobs.jsonl:2: skipped") == true, "\(log.all)")
    }

    @Test func aCorruptLineIsReportedOnceWithItsLineNumberAndEveryOtherRecordReads() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = Log()
        let store = store(log: log)
        try store.append(Self.report("job-1"), coordinator: "n1")
        try appendRaw("not json at all\n")
        try store.append(Self.report("job-2"), coordinator: "n1")
        // A record whose report was cut short but whose summary is whole.
        let line = try JobStore.line(for: Self.report("job-3"), coordinator: "n1", finished: Date())
        try appendRaw(String(decoding: line.prefix(line.count - 20), as: UTF8.self) + "\n")
        try store.append(Self.report("job-4"), coordinator: "n1")
        for _ in 0..<3 {
            #expect(try store.summaries().map(\.job) == ["job-1", "job-2", "job-4"])
        }
        #expect(try store.report(of: "job-4")?.job == "job-4")
        #expect(log.all == [
            "job store \(directory)/jobs.jsonl:2: skipped, it is not a job record",
            "job store \(directory)/jobs.jsonl:4: skipped, it is not a job record",
        ])
    }

    @Test func aStoreOfTenThousandJobsListsAndReadsFromItsIndex() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let directory = directory
        // Seconds of work: on a thread of its own, not the test pool's.
        try await runBlocking("test.history") {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            var history: [UInt8] = []
            for number in 0..<10_000 {
                history += try JobStore.line(for: Self.report("job-\(number)", cancelled: number % 7 == 0), coordinator: "n1", finished: Date())
            }
            try Data(history).write(to: URL(fileURLWithPath: directory + "/jobs.jsonl"))
        }
        let log = Log()
        let store = store(keep: 10_000, log: log)
        let summaries = try await runBlocking("test.index") { try store.summaries() }
        #expect(summaries.count == 10_000)
        #expect(summaries.first?.job == "job-0" && summaries.last?.job == "job-9999")
        #expect(summaries.filter { $0.state == .cancelled }.count == 1_429)
        #expect(try store.report(of: "job-4321")?.job == "job-4321")
        // The history is not read again: bytes already indexed are taken as indexed. (A
        // store that re-read them would now find the first line corrupt.)
        let handle = try #require(FileHandle(forUpdatingAtPath: directory + "/jobs.jsonl"))
        handle.seek(toFileOffset: 0)
        handle.write(Data("X".utf8))
        try handle.close()
        try store.append(Self.report("job-10000"), coordinator: "n1")
        #expect(try store.summaries().count == 10_000, "the newest 10,000")
        #expect(try store.summaries().last?.job == "job-10000")
        #expect(try store.report(of: "job-9999")?.job == "job-9999")
        #expect(log.all.isEmpty, "\(log.all)")
    }

    @Test func theNewestJobsAreKeptAndTheFileIsRewrittenWhole() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = Log()
        let store = store(keep: 5, log: log)
        let other = JobStore(directory: directory, keep: 5)  // another node sharing the folder
        for number in 1...6 { try store.append(Self.report("job-\(number)"), coordinator: "n1") }
        #expect(try other.summaries().map(\.job) == ["job-2", "job-3", "job-4", "job-5", "job-6"], "only the newest 5 are listed")
        #expect(try store.report(of: "job-1") == nil)
        #expect(try String(contentsOfFile: directory + "/jobs.jsonl", encoding: .utf8).split(separator: "\n").count == 6,
                "a tenth over (at least one) before the file is rewritten")
        try store.append(Self.report("job-7"), coordinator: "n1")
        let lines = try String(contentsOfFile: directory + "/jobs.jsonl", encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 5, "rewritten with the newest 5")
        #expect(!FileManager.default.fileExists(atPath: directory + "/jobs.jsonl.compacting"))
        #expect(try store.summaries().map(\.job) == ["job-3", "job-4", "job-5", "job-6", "job-7"])
        #expect(try other.summaries().map(\.job) == ["job-3", "job-4", "job-5", "job-6", "job-7"], "the other node reads the new file")
        #expect(try other.report(of: "job-5")?.job == "job-5")
        try other.append(Self.report("job-8"), coordinator: "n2")
        #expect(try store.summaries().last?.job == "job-8", "and this one sees the other's append")
        #expect(log.all.isEmpty, "\(log.all)")
    }

    @Test func aCompactionThatFindsTheDiskFullLeavesTheFileAsItWas() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let disk = FillingDisk()
        let log = Log()
        let store = store(keep: 2, disk: disk, log: log)
        for number in 1...3 { try store.append(Self.report("job-\(number)"), coordinator: "n1") }
        let line = try JobStore.line(for: Self.report("job-4"), coordinator: "n1", finished: Date())
        disk.space.withLock { $0 = line.count + 10 }  // the record fits; its rewrite does not
        try store.append(Self.report("job-4"), coordinator: "n1")
        #expect(try store.summaries().map(\.job) == ["job-3", "job-4"])
        #expect(try String(contentsOfFile: directory + "/jobs.jsonl", encoding: .utf8).split(separator: "\n").count == 4)
        #expect(!FileManager.default.fileExists(atPath: directory + "/jobs.jsonl.compacting"))
        #expect(log.all.count == 1 && log.all[0].contains("no space left on device"), "\(log.all)")
    }

    @Test func recordsStoredBeforeSummariesCameFirstStillRead() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let report = String(decoding: try JSONEncoder().encode(Self.report("job-old", cancelled: true)), as: UTF8.self)
        let summary = #"{"job":"job-old","finished":"2026-01-01T00:00:00Z","coordinator":"n1","network":"synthetic","users":3,"completedUsers":0,"failedUsers":0,"cancelled":true,"wallTime":0.5}"#
        try Data("{\"report\":\(report),\"summary\":\(summary)}\n".utf8).write(to: URL(fileURLWithPath: directory + "/jobs.jsonl"))
        let store = store()
        #expect(try store.summaries().map(\.state) == [.cancelled])
        #expect(try store.report(of: "job-old")?.cancelled == true)
        try store.append(Self.report("job-new"), coordinator: "n1")
        #expect(try store.summaries().map(\.job) == ["job-old", "job-new"])
    }

    @Test func theEndOfAJSONObjectIsFoundPastBracesInStrings() {
        let text = Array(#"{"a":"}{\"}","b":[{"c":1}]},"rest""#.utf8)
        #expect(JobStore.endOfObject(in: text[...], from: 0) == 27)
        #expect(JobStore.endOfObject(in: Array(#"{"a":"#.utf8)[...], from: 0) == nil)
    }
}
