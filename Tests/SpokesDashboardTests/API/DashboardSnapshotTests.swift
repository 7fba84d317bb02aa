import Foundation
import SpokesCluster
import Testing
@testable import SpokesDashboard

/// The page's script reads these keys: renaming one breaks the dashboard silently.
@Suite struct DashboardSnapshotTests {
    @Test func snapshotEncodesTheKeysThePageReads() throws {
        let snapshot = DashboardSnapshot(
            node: "a", cluster: "c", time: 12.5,
            members: [MemberView(name: "a", address: "127.0.0.1:1", state: "alive", isServing: true, slots: 4, waitingSlots: 100,
                                  inUse: TaskBudgets(cpu: 1, waiting: 2), completed: 2, failed: 0)],
            jobs: [JobView(id: "job-1", kind: "bikes.user", title: "t", coordinator: "a", state: "running", total: 10, done: 3, failed: 0,
                           retries: 1, elapsed: 2, rate: 1.5, estimatedRemaining: 4.7, perNode: ["a": .init(done: 3, running: 1)], stationBikes: [1, 2])],
            tasks: [TaskSpanView(node: "a", slot: 0, job: "job-1", task: 3, attempt: 1, start: 11, end: nil, outcome: "running")],
            groups: [ReplicaGroupView(id: "bikejob-job-1", node: "a", replicas: ["a", "b", "c"], leader: "b", term: 2, role: "follower", commitIndex: 9)],
            failovers: [FailoverView(time: 12, group: "bikejob-job-1", job: "job-1", from: "c", to: "b", term: 2)])
        let object = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(snapshot)) as? [String: Any])
        #expect(Set(object.keys) == ["node", "cluster", "time", "members", "jobs", "tasks", "groups", "failovers"])
        let member = try #require((object["members"] as? [[String: Any]])?.first)
        #expect(Set(member.keys) == ["name", "address", "state", "isServing", "slots", "waitingSlots", "slotsInUse", "waitingSlotsInUse",
                                     "running", "completed", "failed"])
        #expect(member["slotsInUse"] as? Int == 1 && member["waitingSlotsInUse"] as? Int == 2 && member["running"] as? Int == 3)
        let job = try #require((object["jobs"] as? [[String: Any]])?.first)
        #expect(Set(job.keys) == ["id", "kind", "title", "coordinator", "state", "total", "done", "failed", "retries", "elapsed", "rate",
                                  "estimatedRemaining", "perNode", "stationBikes"])
        let task = try #require((object["tasks"] as? [[String: Any]])?.first)
        #expect(Set(task.keys) == ["node", "slot", "job", "task", "attempt", "start", "outcome"])
        let group = try #require((object["groups"] as? [[String: Any]])?.first)
        #expect(Set(group.keys) == ["id", "kind", "job", "node", "replicas", "leader", "term", "role", "commitIndex"])
        #expect(group["job"] as? String == "job-1" && group["kind"] as? String == "bikejob" && group["leader"] as? String == "b")
        let failover = try #require((object["failovers"] as? [[String: Any]])?.first)
        #expect(Set(failover.keys) == ["time", "group", "job", "from", "to", "term"])
    }
}
