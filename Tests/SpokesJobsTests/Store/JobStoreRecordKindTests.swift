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

    /// A line in the format before the summary came first (`{"report":R,"summary":S}`, as
    /// 0.1 wrote it) is read whole: its report's bytes under its own key, its summary listed.
    @Test func aLineInTheFormatBeforeTheSummaryCameFirstIsReadWhole() throws {
        let disk = SimulatedDisk()
        let report = #"{"users":[1,{"name":"a } \" ]"}],"done":true}"#
        let summary = String(decoding: try JSONEncoder().encode(summary("old-1")), as: UTF8.self)
        try disk.makeDirectory("/data/n1")
        try disk.append(Array(#"{"report": \#(report) ,"summary":\#(summary)}"#.utf8) + [0x0A], to: "/data/n1/jobs.jsonl")
        let store = store(disk)
        #expect(try store.summaries().map(\.job) == ["old-1"])
        #expect(try store.report(of: "old-1", key: "report") == Data(report.utf8))
    }

    /// The members of a stored line's object, as ``JobStore/members(ofObject:)`` splits them:
    /// every kind of value, whitespace, brackets and quotes inside strings; nil for what is
    /// not one whole object.
    @Test func anObjectIsSplitIntoItsMembersAndAnythingElseIsRefused() {
        func split(_ text: String) -> [String]? {
            JobStore.members(ofObject: Array(text.utf8)[...])?.map { "\($0.key)=\(String(decoding: $0.value, as: UTF8.self))" }
        }
        #expect(split(#" { "a" : 1 , "b\"c":"x,}]" ,"d":[{"e":null}], "f":-2.5e3,"g":true } "#)
            == ["a=1", #"b"c="x,}]""#, #"d=[{"e":null}]"#, "f=-2.5e3", "g=true"])
        #expect(split("{}") == [])
        #expect(split(#"{"\u0061\/":1,"ü\n":2}"#) == ["a/=1", "ü\n=2"], "keys with escapes, read as JSONDecoder reads them")
        // Escapes within nested strings; an object read in place within a larger line.
        let nested = #"{"a":["x\\\"]",{"b":"\\\\"}],"c":{"d":"}"}}"#
        #expect(split(nested) == [#"a=["x\\\"]",{"b":"\\\\"}]"#, #"c={"d":"}"}"#])
        let line = Array(("garbage" + nested + "tail").utf8)
        let inPlace = JobStore.members(ofObject: line[7..<(line.count - 4)])?.map { "\($0.key)=\(String(decoding: $0.value, as: UTF8.self))" }
        #expect(inPlace == split(nested))
        #expect(JobStore.endOfValue(in: line[7..<(line.count - 5)], from: 7) == nil, "an object cut before its brace")
        #expect(JobStore.endOfValue(in: line[7...], from: 7) == line.count - 4)
        for bad in ["", "[1]", #"{"a":1"#, #"{"a" 1}"#, #"{"a":1}x"#, #"{"a":1,}"#, #"{a:1}"#, #"{"a":"1}"#, #"{"a":}"#, #"{"a":["\"]}"#, #"{"a":["x\"#, #"{"\x":1}"#, #"{"\ud800":1}"#, "{\"a\u{1}\":1}"] {
            #expect(split(bad) == nil, "\(bad)")
        }
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
