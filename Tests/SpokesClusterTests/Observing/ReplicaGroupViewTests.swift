import Foundation
import SpokesConcurrency
import SpokesTestKit
import Testing
@testable import SpokesCluster

/// What a replica says of its group: the job read from the group's id, which view of a
/// group knows most, and how the views reach a remote caller.
@Suite(.processLane, .timeLimit(.minutes(1)))
struct ReplicaGroupViewTests {
    func view(_ id: String, node: String = "n1", leader: String?, term: Int, role: String = "follower", commit: Int = 0) -> ReplicaGroupView {
        ReplicaGroupView(id: id, node: node, replicas: ["n3", "n1", "n2"], leader: leader, term: term, role: role, commitIndex: commit)
    }

    @Test func theJobAndItsKindAreReadFromTheGroupsID() {
        #expect(ReplicaGroupView.parse("taskjob-map-0a3f442b") == ("taskjob", "map-0a3f442b"))
        #expect(ReplicaGroupView.parse("bikejob-job-12") == ("bikejob", "job-12"))
        #expect(ReplicaGroupView.parse("job-job-12") == ("job", "job-12"), "a workload's job, a bike job since protocol 7")
        #expect(ReplicaGroupView.parse("g") == ("g", nil))
        #expect(ReplicaGroupView.parse("other-thing") == ("other", nil), "only job kinds keep a job")
        #expect(ReplicaGroupView.parse("taskjob-") == ("taskjob", nil))
        let job = view("taskjob-map-1", leader: "n2", term: 3)
        #expect(job.kind == "taskjob" && job.job == "map-1")
        #expect(job.replicas == ["n1", "n2", "n3"], "replicas are sorted")
    }

    @Test func aDecodedViewReadsItsJobFromItsIDWhateverTheSenderSaid() throws {
        var json = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(view("taskjob-map-1", leader: nil, term: 2))) as? [String: Any])
        #expect(json["job"] as? String == "map-1" && json["kind"] as? String == "taskjob")
        json["job"] = "someone-else"
        json["kind"] = "bikejob"
        let decoded = try JSONDecoder().decode(ReplicaGroupView.self, from: JSONSerialization.data(withJSONObject: json))
        #expect(decoded == view("taskjob-map-1", leader: nil, term: 2))
    }

    @Test func theMostInformedViewHasTheHighestTermThenIsTheLeadersOwn() throws {
        let stale = view("g", node: "n1", leader: "n1", term: 2, role: "leader", commit: 50)
        let electing = view("g", node: "n2", leader: nil, term: 3, role: "candidate", commit: 40)
        let follower = view("g", node: "n2", leader: "n3", term: 3, commit: 40)
        let leader = view("g", node: "n3", leader: "n3", term: 3, role: "leader", commit: 41)
        #expect(ReplicaGroupView.mostInformed([stale, electing]) == electing, "a later term outranks an old leader")
        #expect(ReplicaGroupView.mostInformed([electing, follower, stale]) == follower, "then one that knows the leader")
        #expect(ReplicaGroupView.mostInformed([follower, leader, electing, stale]) == leader, "then the leader's own")
        #expect(ReplicaGroupView.mostInformed([]) == nil)
    }

    @Test func anObservationFromANodeThatSaysNothingOfGroupsDecodes() throws {
        let observation = NodeObservation(
            node: "n1", now: 1, uptime: 1, slots: 1, waitingSlots: 1, inUse: .zero, succeeded: 0, failed: 0, tasks: [], lastTaskSequence: 0,
            jobs: [], roundTrips: [:], replicaGroups: [view("g", leader: nil, term: 1)])
        var json = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(observation)) as? [String: Any])
        #expect(json["replicaGroups"] != nil)
        // What an older node sends: no such key.
        json["replicaGroups"] = nil
        let decoded = try JSONDecoder().decode(NodeObservation.self, from: JSONSerialization.data(withJSONObject: json))
        #expect(decoded.replicaGroups == nil)
    }

    @Test func aRemoteObservationCarriesTheGroupsTheNodesProviderGives() async throws {
        let nodes = try ClusterNodeTests.startNodes(2, discoveryPort: TestPorts.discovery(), cluster: "groups-\(UUID())")
        defer { nodes.forEach { $0.stop() } }
        try await ClusterNodeTests.waitUntil(nodes[0], "seeing n1 alive") { $0.contains { $0.node.name == "n1" && $0.state == .alive } }
        let status = try NodeStatus.resolve(id: ActorID(node: nodes[1].system.node, name: NodeStatus.wellKnownName), using: nodes[0].system)
        #expect(try await status.observe(tasksAfter: 0).replicaGroups == [], "a node without a provider holds no groups")
        let groups = [view("taskjob-map-2", node: "n1", leader: "n1", term: 1, role: "leader"), view("g", node: "n1", leader: "n2", term: 4)]
        nodes[1].setReplicaGroups { groups }
        let observed = try await status.observe(tasksAfter: 0)
        #expect(observed.replicaGroups == groups.sorted { $0.id < $1.id })
        #expect(await nodes[1].replicaGroups() == observed.replicaGroups)
    }
}
