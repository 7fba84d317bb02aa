import Testing
@testable import SpokesReplication
@testable import SpokesJobs

/// When a job's group cannot go on (review, issue 29 §1.8 and §2: a one-node cluster
/// whose disk filled, and groups that lost their majority, were listed as running and
/// followed forever).
@Suite struct JobStallTests {
    @Test func aGroupWithAMajorityTakingPartIsNotStalled() {
        #expect(JobGroups.stall(replicas: ["a", "b", "c"], me: "a", failure: nil, alive: ["b"]) == nil)
        #expect(JobGroups.stall(replicas: ["a", "b", "c"], me: "a", failure: "disk full", alive: ["b", "c"]) == nil, "the others go on")
        #expect(JobGroups.stall(replicas: ["a"], me: "a", failure: nil, alive: []) == nil)
    }

    @Test func aLoneReplicaWhoseStorageFailedIsStalledAndSaysWhy() throws {
        let reason = try #require(JobGroups.stall(replicas: ["a"], me: "a", failure: "its storage failed: No space left on device", alive: []))
        #expect(reason.contains("0 of its 1 replicas can take part"), "\(reason)")
        #expect(reason.contains("its replica on a stopped (its storage failed: No space left on device)"))
    }

    @Test func twoDeadReplicasOfThreeAreNamed() throws {
        let reason = try #require(JobGroups.stall(replicas: ["a", "b", "c"], me: "a", failure: nil, alive: []))
        #expect(reason.contains("b, c are not alive") && reason.contains("a majority is 2"), "\(reason)")
        #expect(reason.contains("it goes on once a majority of them is back"))
    }
}
