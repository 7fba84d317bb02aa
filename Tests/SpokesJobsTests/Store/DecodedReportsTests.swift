import Foundation
import SpokesCluster
import SpokesConcurrency
import Synchronization
import Testing
@testable import SpokesJobs

/// A report asked for again is not decoded again, and what is returned is always what
/// the stored bytes decode to now.
@Suite struct DecodedReportsTests {
    /// A decoder that counts its calls: the text of the bytes, uppercased.
    final class CountingDecoder: Sendable {
        let calls = Mutex(0)
        func decode(_ data: Data) -> String? {
            calls.withLock { $0 += 1 }
            return String(decoding: data, as: UTF8.self).uppercased()
        }
    }

    @Test func theSameBytesAreDecodedOnce() {
        let reports = DecodedReports(), decoder = CountingDecoder()
        for _ in 0..<5 {
            #expect(reports.value(of: "j-1", recordKey: "taskJob", source: Data("abc".utf8), decode: decoder.decode) == "ABC")
        }
        #expect(decoder.calls.withLock { $0 } == 1)
    }

    @Test func otherBytesUnderTheSameJobAreDecodedAfresh() {
        let reports = DecodedReports(), decoder = CountingDecoder()
        #expect(reports.value(of: "j-1", recordKey: "taskJob", source: Data("abc".utf8), decode: decoder.decode) == "ABC")
        #expect(reports.value(of: "j-1", recordKey: "taskJob", source: Data("abd".utf8), decode: decoder.decode) == "ABD")
        #expect(reports.value(of: "j-1", recordKey: "report", source: Data("abd".utf8), decode: decoder.decode) == "ABD")
        #expect(decoder.calls.withLock { $0 } == 3)
    }

    /// Values of two types made of one report are kept side by side: neither is taken for
    /// the other, nor pushes it out.
    @Test func aValueOfAnotherTypeIsNotTakenForOne() {
        let reports = DecodedReports(), calls = Mutex(0)
        func text() -> String? {
            reports.value(of: "j-1", recordKey: "taskJob", source: Data("7".utf8)) { _ in
                calls.withLock { $0 += 1 }
                return "seven"
            }
        }
        func number() -> Int? {
            reports.value(of: "j-1", recordKey: "taskJob", source: Data("7".utf8)) { data in
                calls.withLock { $0 += 1 }
                return Int(String(decoding: data, as: UTF8.self))
            }
        }
        #expect(text() == "seven")
        #expect(number() == 7)
        #expect(text() == "seven")
        #expect(number() == 7)
        #expect(calls.withLock { $0 } == 2, "each type decoded once")
    }

    @Test func aFailedDecodingIsNotKept() {
        let reports = DecodedReports(), calls = Mutex(0)
        for _ in 0..<3 {
            let value: String? = reports.value(of: "j-1", recordKey: "taskJob", source: Data("x".utf8)) { _ in
                calls.withLock { $0 += 1 }
                return nil
            }
            #expect(value == nil)
        }
        #expect(calls.withLock { $0 } == 3)
    }

    @Test func onlyTheNewestReportsAndNoLargeOneAreKept() {
        let reports = DecodedReports(), decoder = CountingDecoder()
        let jobs = (0...DecodedReports.capacity).map { "j-\($0)" }
        for job in jobs { _ = reports.value(of: job, recordKey: "taskJob", source: Data(job.utf8), decode: decoder.decode) }
        // The newest `capacity` are kept; the oldest was let go, and is decoded again.
        for job in jobs.dropFirst() { _ = reports.value(of: job, recordKey: "taskJob", source: Data(job.utf8), decode: decoder.decode) }
        #expect(decoder.calls.withLock { $0 } == jobs.count)
        _ = reports.value(of: jobs[0], recordKey: "taskJob", source: Data(jobs[0].utf8), decode: decoder.decode)
        #expect(decoder.calls.withLock { $0 } == jobs.count + 1)

        let large = Data(repeating: UInt8(ascii: "a"), count: DecodedReports.largestKept + 1)
        _ = reports.value(of: "big", recordKey: "taskJob", source: large, decode: decoder.decode)
        _ = reports.value(of: "big", recordKey: "taskJob", source: large, decode: decoder.decode)
        #expect(decoder.calls.withLock { $0 } == jobs.count + 3)
    }

    /// Through the store: a job's report read twice is the same report, and a store
    /// that replaced the line (another process compacted and wrote it anew) is read anew.
    @Test func theStoreReturnsWhatItsLineSaysNow() throws {
        let disk = SimulatedDisk()
        let store = JobStore(directory: "/data/n1", disk: disk, clock: VirtualClock())
        let report = TaskJobReport(
            job: "map-1", kind: "k", schema: nil, title: "t", coordinator: "n1", inputs: ["1"],
            tasks: [TaskJobReport.TaskEnd(JobRunner.Outcome(task: 0, output: "2", node: "n1", attempts: 1, failures: []))],
            wallTime: 0.5, cancelReason: nil)
        try store.append(report)
        #expect(try store.taskJobReport(of: "map-1")?.tasks.map(\.output) == ["2"])
        #expect(try store.taskJobReport(of: "map-1")?.tasks.map(\.output) == ["2"])
        // Another store on the same file stores the job again with another output: the
        // newest line is the job's.
        var changed = report
        changed.tasks[0].output = "3"
        try JobStore(directory: "/data/n1", disk: disk, clock: VirtualClock()).append(changed)
        #expect(try store.taskJobReport(of: "map-1")?.tasks.map(\.output) == ["3"])
    }
}
