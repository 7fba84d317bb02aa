import SpokesCluster
import SpokesClusterTestKit
import SpokesConcurrency
import SpokesTestKit
import Testing
@testable import SpokesReplication
@testable import SpokesJobs

/// How a job's group is opened (``JobGroups/open(_:for:with:machine:first:cancel:)``), in
/// virtual time on simulated nodes and disks.
@Suite(.simulated) struct JobGroupOpeningTests {
    /// Issue 33 §2: the first leader of a new group started before its peers held the
    /// group, so its first appends were dropped there and sent again only at its next
    /// heartbeat: every replicated job's start waited a heartbeat interval (100 ms of a
    /// 3-user real-time job's 1.9 s). Started once its peers hold the group, its first
    /// entry commits in the time the messages and flushes take. (Each write and flush
    /// takes 4 ms, as on this project's machines: opening a group takes several, more
    /// than the leader's first flush.)
    @Test(.hangGuard)
    func aNewGroupsFirstEntryCommitsWithoutWaitingForAHeartbeat() async throws {
        let disks = (0..<3).map { _ in SimulatedDisk() }
        let cluster = try SimulatedCluster(3, disk: { disks[$0] })
        defer { cluster.stop() }
        for disk in disks { disk.slow(on: cluster.clock, by: 0.004...0.004) }
        let settings = cluster.nodes.map { RaftHostSettings(dataDirectory: "/data/" + $0.system.node.name) }
        let hosts = zip(cluster.nodes, settings).map { node, settings in
            RaftHost(system: node.system, settings: settings, machines: ["taskjob": { CommandList() }])
        }
        try await cluster.awaitMesh()
        let coordinator = cluster[0]
        let groups = JobGroups(host: hosts[0], system: coordinator.system, members: { [weak coordinator] in coordinator?.members ?? [] })
        let peers = cluster.nodes[1...].map(\.system.node)
        let began = cluster.clock.now
        try await cluster.complete("the group opens and commits its first entry", within: 5) {
            try await groups.open("taskjob-first", for: "first", with: peers, machine: CommandList(), first: "the spec")
        }
        let took = cluster.clock.now - began
        let heartbeat = settings[0].raft.heartbeatInterval
        #expect(took < heartbeat, "the first entry committed \(took) s after the open began; a heartbeat is \(heartbeat) s")
        #expect((await hosts[0].stateMachine(of: "taskjob-first") as? CommandList)?.applied == ["the spec"])
        // Stopped while virtual time moves: a flush on a slow disk waits for it, and a
        // stop waits for the flush.
        try await cluster.complete("the hosts stop", within: 5) { for host in hosts { await host.stop() } }
    }
}
