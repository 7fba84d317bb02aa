import SpokesCluster
import SpokesClusterTestKit
import SpokesConcurrency
import SpokesTestKit
import Testing
@testable import SpokesReplication
@testable import SpokesJobs

/// A replica's applied index and the host's count of applied changes, read without a hop
/// onto the replica (``RaftHost/appliedIndex(of:)``, ``RaftHost/appliedChanges``), in
/// virtual time on simulated nodes and disks: what the simulator's checks skip a replica
/// on must follow what the replica applied.
@Suite(.simulated) struct RaftHostAppliedIndexTests {
    @Test(.hangGuard)
    func theAppliedIndexAndItsChangeCountFollowWhatEachReplicaApplied() async throws {
        let cluster = try SimulatedCluster(3, disk: { _ in SimulatedDisk() })
        defer { cluster.stop() }
        let hosts = cluster.nodes.map { node in
            RaftHost(system: node.system, settings: RaftHostSettings(dataDirectory: "/data/" + node.system.node.name), machines: ["taskjob": { CommandList() }])
        }
        try await cluster.awaitMesh()
        let group = "taskjob-counted"
        #expect(hosts.allSatisfy { $0.appliedIndex(of: group) == nil })
        var seen = hosts.map { $0.appliedChanges.value }
        let coordinator = cluster[0]
        let groups = JobGroups(host: hosts[0], system: coordinator.system, members: { [weak coordinator] in coordinator?.members ?? [] })
        try await cluster.complete("the group opens and commits its first entry", within: 5) {
            try await groups.open(group, for: "counted", with: cluster.nodes[1...].map(\.system.node), machine: CommandList(), first: "the spec")
        }

        /// Every replica applied `index`, and reads it without a hop as it does with one.
        func everyReplicaApplied(_ index: Int) async throws {
            try await cluster.run(until: "every replica applied \(index)", within: 5) {
                for host in hosts where await host.status(of: group)?.appliedIndex != index { return false }
                return true
            }
            for host in hosts {
                let status = await host.status(of: group)
                #expect(host.appliedIndex(of: group) == status?.appliedIndex)
            }
        }
        let first = try #require(await hosts[0].status(of: group)?.appliedIndex)
        try await everyReplicaApplied(first)
        for (host, before) in zip(hosts, seen) { #expect(host.appliedChanges.value > before, "the group opened and applied its first entry") }

        seen = hosts.map { $0.appliedChanges.value }
        try await cluster.run(for: 2)
        #expect(hosts.map { $0.appliedChanges.value } == seen, "heartbeats apply nothing")

        _ = try await cluster.complete("a second entry commits", within: 5) { try await hosts[0].propose(group: group, command: "second") }
        try await everyReplicaApplied(first + 1)
        for (host, before) in zip(hosts, seen) { #expect(host.appliedChanges.value > before, "the second entry applied") }
        try await cluster.complete("the hosts stop", within: 5) { for host in hosts { await host.stop() } }
    }
}
