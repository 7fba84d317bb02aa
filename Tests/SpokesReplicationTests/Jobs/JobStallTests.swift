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

    /// Found by the nodes model's `jobs` and `result --wait` clients (seed 6 of
    /// `simulate-cluster --model nodes --nodes 5`): a coordinator whose disk filled stopped
    /// its replica; the others took the map over and stored it, and the stopped replica,
    /// which never learns that, listed the map as running for good.
    @Test func aStoppedReplicaWhoseGroupGoesOnElsewhereHoldsNothing() throws {
        #expect(JobGroups.held(leader: "a", replicas: ["a", "b", "c"], me: "a", failure: "disk full", alive: ["b", "c"]) == nil,
                "the others run the job and list it")
        #expect(JobGroups.held(leader: nil, replicas: ["a", "b", "c"], me: "a", failure: "disk full", alive: ["b", "c"]) == nil)
        let lone = try #require(JobGroups.held(leader: "a", replicas: ["a"], me: "a", failure: "disk full", alive: []))
        #expect(lone?.contains("its replica on a stopped (disk full)") == true, "a stopped lone replica is held, stalled, and says why")
        #expect(JobGroups.held(leader: "a", replicas: ["a", "b", "c"], me: "a", failure: nil, alive: ["b", "c"]) == .some(nil), "a leader that runs")
        #expect(JobGroups.held(leader: "b", replicas: ["a", "b", "c"], me: "a", failure: nil, alive: ["b", "c"]) == nil, "another leads it")
        #expect(JobGroups.held(leader: "b", replicas: ["a", "b", "c"], me: "a", failure: nil, alive: ["c"]) == .some(nil), "its leader is dead")
    }
}
