import Foundation
import Testing
@testable import SpokesCluster

@Suite struct JobShareTests {
    @Test func theOwnerDefaultsToTheSubmittingUser() {
        #expect(JobShare.submitter(environment: ["USER": "ada", "LOGNAME": "other"]) == "ada")
        #expect(JobShare.submitter(environment: ["LOGNAME": "bob"]) == "bob")
        #expect(JobShare.submitter(environment: ["USER": ""]) == "unknown")
        #expect(JobShare.submitter(environment: ["USER": String(repeating: "x", count: 500)]).utf8.count == JobShare.maximumOwnerBytes)
    }

    @Test func aNodeLowersAPriorityAboveItsCapAndKeepsTheRest() {
        let asked = JobShare(owner: "ada", priority: 10, maxSlots: 3)
        #expect(asked.capped(atPriority: 4) == JobShare(owner: "ada", priority: 4, maxSlots: 3))
        #expect(JobShare(owner: "ada", priority: 2).capped(atPriority: 4).priority == 2)
        #expect(JobShare(owner: "ada").priority == JobShare.defaultPriority && JobShare.priorities.contains(JobShare.defaultPriority))
    }

    @Test func fieldsOutOfRangeAreRefusedNamingThem() {
        #expect(throws: OutOfRange.self) { try JobShare(owner: "ada", priority: 11).checkRanges() }
        #expect(throws: OutOfRange.self) { try JobShare(owner: "ada", priority: 0).checkRanges() }
        #expect(throws: OutOfRange.self) { try JobShare(owner: "ada", maxSlots: 0).checkRanges() }
        #expect(throws: OutOfRange.self) { try JobShare(owner: String(repeating: "x", count: 101)).checkRanges() }
        let request = TaskRequest(job: "j", task: 0, attempt: 1, kind: "k", input: "1", share: JobShare(owner: "ada", priority: 99))
        do {
            try request.checkRanges()
            Issue.record("a worker took priority 99")
        } catch {
            #expect("\(error)".contains("priority"))
        }
    }

    @Test func aRequestWithoutAShareStillDecodes() throws {
        // An older coordinator's attempt: no `share` key.
        let json = #"{"job":"j","task":0,"attempt":1,"kind":"k","input":"1","cost":"cpu"}"#
        let request = try JSONDecoder().decode(TaskRequest.self, from: Data(json.utf8))
        #expect(request.share == nil)
    }
}
