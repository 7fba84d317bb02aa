import Foundation
import SpokesCluster
import SpokesConcurrency
import Testing
@testable import SpokesJobs

/// The job store keeps any workload's reports: each under its own key, read back whole
/// by that key alone, on a simulated disk.
@Suite struct JobStoreRecordKindTests {
    func store(_ disk: SimulatedDisk = SimulatedDisk()) -> JobStore {
        JobStore(directory: "/data/n1", disk: disk, clock: VirtualClock())
    }

    func summary(_ job: String) -> JobStore.Summary {
        JobStore.Summary(job: job, state: .completed, finished: "2026-11-27T10:00:00Z", coordinator: "n1", title: "t", tasks: 1,
                         succeeded: 1, failed: 0, cancelled: 0, retries: 0, wallTime: 0.5)
    }

    @Test func aWorkloadsReportIsReadBackUnderItsKeyAndNoOther() throws {
        let store = store()
        let report = Data(#"{"answer":42,"text":"a \"quoted\" } brace"}"#.utf8)
        try store.append(summary: summary("w-1"), key: "weather", report: report)
        #expect(try store.report(of: "w-1", key: "weather") == report)
        #expect(try store.report(of: "w-1", key: JobStore.taskJobKey) == nil)
        #expect(try store.taskJobReport(of: "w-1") == nil)
        #expect(try store.summaries().map(\.job) == ["w-1"])
    }

    @Test func aKeyThatIsNotAWordIsRefusedAndStoresNothing() throws {
        let store = store()
        for key in ["", "summary", "reportBytes", "a\"b", "two words", String(repeating: "k", count: 33)] {
            #expect(throws: JobStore.StoreError.self) { try store.append(summary: summary("bad"), key: key, report: Data("{}".utf8)) }
        }
        #expect(try store.summaries().isEmpty)
    }

    @Test func storedLinesSurviveAReopenWithTheirKinds() throws {
        let disk = SimulatedDisk()
        try store(disk).append(summary: summary("a"), key: "alpha", report: Data("[1]".utf8))
        try store(disk).append(summary: summary("b"), key: "beta", report: Data("[2]".utf8))
        let reopened = store(disk)
        #expect(try reopened.report(of: "a", key: "alpha") == Data("[1]".utf8))
        #expect(try reopened.report(of: "b", key: "beta") == Data("[2]".utf8))
        #expect(try reopened.summaries().map(\.job) == ["a", "b"])
    }
}
