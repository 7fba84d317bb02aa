import Foundation
import SpokesTestKit
import Testing
@testable import SpokesCluster

/// A task attempt's request and result by hand against `Codable`, pure: what the hand
/// form writes, `JSONDecoder` (an earlier release's worker or coordinator) reads as the
/// same value; what the hand reader reads is what `JSONDecoder` reads; anything off the
/// form is left to `JSONDecoder`.
@Suite struct TaskRequestHandWrittenTests {
    static let requests: [TaskRequest] = [
        TaskRequest(job: "j1", task: 0, attempt: 1, kind: "bench.noop", input: "{}"),
        TaskRequest(job: "job-\u{e9}\"quoted\"\\", task: 41, attempt: 3, kind: "pi.sample", input: #"{"samples":1000,"note":"a\nb \u0001 \u{1F6B2}"}"#, cost: .waiting),
        TaskRequest(job: "", task: .max, attempt: .min, kind: "", input: "", share: JobShare(owner: "ada", priority: 7)),
        TaskRequest(job: "j", task: 2, attempt: 1, kind: "k", input: "[1,2]", share: JobShare(owner: "l\u{e9}a \"x\"", priority: 1, maxSlots: 4)),
        TaskRequest(job: "j", task: 2, attempt: 1, kind: "k", input: "3", share: .unnamed),
        TaskRequest(job: "j", task: 5, attempt: 1, kind: "k", input: "3", readyAgo: 0.25),
        TaskRequest(job: "j", task: 6, attempt: 1, kind: "k", input: "3", share: JobShare(owner: "o", priority: 2), readyAgo: 0),
        TaskRequest(job: "j", task: 7, attempt: 1, kind: "k", input: "3", readyAgo: 1.234567e-05),
        TaskRequest(job: "j", task: 8, attempt: 1, kind: "k", input: "3", readyAgo: 86_400),
    ]
    static let results: [TaskResult] = [.busy, .done(output: "{}"), .done(output: ""), .done(output: #"{"pi":3.14,"text":"\"q\" \u0007 \u{e9}"}"#)]

    @Test func whatItWritesJSONDecoderReadsAsTheSameValueAndSoDoesIt() throws {
        for request in Self.requests {
            let bytes = try #require(request.handWrittenJSON)
            #expect(try JSONDecoder().decode(TaskRequest.self, from: Data(bytes)) == request, "\(String(decoding: bytes, as: UTF8.self))")
            #expect(TaskRequest(handWrittenJSON: bytes[...]) == request)
        }
        for result in Self.results {
            let bytes = try #require(result.handWrittenJSON)
            #expect(try JSONDecoder().decode(TaskResult.self, from: Data(bytes)) == result, "\(String(decoding: bytes, as: UTF8.self))")
            #expect(TaskResult(handWrittenJSON: bytes[...]) == result)
        }
    }

    @Test func whatJSONEncoderWritesIsReadTheSameOrLeftToJSONDecoder() throws {
        for request in Self.requests {
            let bytes = Array(try JSONEncoder().encode(request))
            if let read = TaskRequest(handWrittenJSON: bytes[...]) { #expect(read == request) }
        }
        for result in Self.results {
            let bytes = Array(try JSONEncoder().encode(result))
            if let read = TaskResult(handWrittenJSON: bytes[...]) { #expect(read == result) }
        }
    }

    @Test func anythingOffItsFormIsLeftToJSONDecoder() {
        let requests = [
            #"{"task":1,"job":"j","attempt":1,"kind":"k","input":"{}","cost":"cpu"}"#,
            #"{"job":"j","task":1,"attempt":1,"kind":"k","input":"{}","cost":"gpu"}"#,
            #"{"job":"j","task":1,"attempt":1,"kind":"k","input":"{}","cost":"cpu"} "#,
            #"{"job":"j","task":1.5,"attempt":1,"kind":"k","input":"{}","cost":"cpu"}"#,
            #"{"job":"j","task":1,"attempt":1,"kind":"k","input":"{}","cost":"cpu","share":{"owner":"o"}}"#,
            #"{"job":"j","task":1,"attempt":1,"kind":"k","input":"{}","cost":"cpu","share":{"owner":"o","priority":5,"maxSlots":null}}"#,
            #"{"job":"j","task":1,"attempt":1,"kind":"k","input":"{}","cost":"cpu","share":null}"#,
            #"{"job":"j","task":1,"attempt":1,"kind":"k","input":"{}"}"#,
            "", "{}", "[]",
        ]
        for form in requests { #expect(TaskRequest(handWrittenJSON: Array(form.utf8)[...]) == nil, "\(form)") }
        let results = [#"{"busy":{}} "#, #"{"done":{"output":1}}"#, #"{"done":{"_0":"x"}}"#, #"{"busy":{},"done":{"output":""}}"#, "{}", ""]
        for form in results { #expect(TaskResult(handWrittenJSON: Array(form.utf8)[...]) == nil, "\(form)") }
    }

    @Test func seededMutationsOfItsFormNeverCrashAndReadOnlyWhatJSONDecoderReads() throws {
        var generator = TestGenerator(seed: 35)
        let requestForms = try Self.requests.map { try #require($0.handWrittenJSON) }
        let resultForms = try Self.results.map { try #require($0.handWrittenJSON) }
        for round in 0..<2_000 {
            let request = generator.mutated(requestForms[round % requestForms.count])
            if let read = TaskRequest(handWrittenJSON: request[...]) {
                #expect((try? JSONDecoder().decode(TaskRequest.self, from: Data(request))) == read, "\(String(decoding: request, as: UTF8.self))")
            }
            let result = generator.mutated(resultForms[round % resultForms.count])
            if let read = TaskResult(handWrittenJSON: result[...]) {
                #expect((try? JSONDecoder().decode(TaskResult.self, from: Data(result))) == read, "\(String(decoding: result, as: UTF8.self))")
            }
        }
    }

    /// A worker's call carries the request by hand, and its answer comes back so.
    @Test func aReadinessOutOfRangeIsRefusedNamingItAndAnOlderRequestHasNone() throws {
        for seconds in [-0.001, 86_400.5, .infinity, .nan] {
            let request = TaskRequest(job: "j", task: 0, attempt: 1, kind: "k", input: "1", readyAgo: seconds)
            #expect(throws: OutOfRange.self, "\(seconds)") { try request.checkRanges() }
            do { try request.checkRanges() } catch { #expect("\(error)".contains("readyAgo")) }
        }
        try TaskRequest(job: "j", task: 0, attempt: 1, kind: "k", input: "1", readyAgo: 0.5).checkRanges()
        // An older coordinator's attempt: no `readyAgo` key, by hand or by `JSONDecoder`.
        let json = Array(#"{"job":"j","task":0,"attempt":1,"kind":"k","input":"1","cost":"cpu"}"#.utf8)
        #expect(try JSONDecoder().decode(TaskRequest.self, from: Data(json)).readyAgo == nil)
        #expect(try #require(TaskRequest(handWrittenJSON: json[...])).readyAgo == nil)
    }

    @Test func aRequestAndAResultAreHandWrittenArguments() {
        #expect((Self.requests[1] as Any as? any HandWrittenArgument)?.handWrittenJSON == Self.requests[1].handWrittenJSON)
        #expect((TaskResult.busy as Any as? any HandWrittenArgument)?.handWrittenJSON != nil)
    }
}
