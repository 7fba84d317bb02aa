import Foundation
import SpokesCluster
import SpokesConsensus
import SpokesTestKit
import Testing
@testable import SpokesReplication
@testable import SpokesJobs

/// What the job layers share about job groups, on in-process nodes.
@Suite(.processLane, .timeLimit(.minutes(1)))
struct JobGroupsTests {
    /// A replica that was away when its job finished and the others removed the group
    /// asks them: only a group another replica removed counts as done.
    @Test func aReplicaLearnsItsGroupWasRemovedElsewhereOnlyAfterItWas() async throws {
        let cluster = try RaftTestCluster(nodes: 2)
        try await cluster.converge()
        try await cluster.open("taskjob-gone", on: [0, 1])
        let asker = try #require(cluster.nodes[1]).system
        #expect(await JobGroups.removedElsewhere("taskjob-gone", host: cluster.host(1), system: asker) == false, "n1 still holds it")
        await cluster.host(0).remove(group: "taskjob-gone", .finished)
        #expect(cluster.host(0).wasRemoved("taskjob-gone"))
        #expect(await JobGroups.removedElsewhere("taskjob-gone", host: cluster.host(1), system: asker), "n1 removed it")
        #expect(await JobGroups.removedElsewhere("taskjob-never", host: cluster.host(1), system: asker) == false, "a group n2 does not hold")
        await cluster.stopAll()
    }

    /// Review (issue 29 §1.1): a group removed for any other reason than a finished job
    /// (empty for 30 s while cut off, its first entry not committed here) was answered
    /// "removed", and the live job's leaderless replicas deleted their logs on that answer.
    @Test func aGroupRemovedUnfinishedIsNeverAnsweredAsRemoved() async throws {
        let cluster = try RaftTestCluster(nodes: 2)
        try await cluster.converge()
        try await cluster.open("taskjob-alive", on: [0, 1])
        let asker = try #require(cluster.nodes[1]).system
        await cluster.host(0).remove(group: "taskjob-alive", .abandoned)
        #expect(!cluster.host(0).wasRemoved("taskjob-alive"))
        #expect(await JobGroups.removedElsewhere("taskjob-alive", host: cluster.host(1), system: asker) == false,
                "n2 keeps its replica of a job nobody saw finish")
        await cluster.stopAll()
    }
}
