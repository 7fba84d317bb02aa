import SpokesCluster
import SpokesClusterTestKit
import SpokesConcurrency
import SpokesTestKit
import Testing
@testable import SpokesReplication
@testable import SpokesJobs

/// A replica that stopped because its storage failed starts again from its disk, in
/// virtual time on simulated nodes and disks.
@Suite(.simulated) struct RaftHostStorageFailureTests {
    /// (`simulate-cluster --model nodes --nodes 3`, seed 500): two of a job group's three
    /// replicas stopped on full disks, one after the other, and the group never moved
    /// again: its job waited forever, and so did its client. Now each starts again from
    /// its disk once that has room, and the group commits again.
    @Test(.hangGuard)
    func replicasStoppedByFullDisksStartAgainAndTheGroupCommitsAgain() async throws {
        let disks = (0..<3).map { _ in SimulatedDisk() }
        let cluster = try SimulatedCluster(3, disk: { disks[$0] })
        defer { cluster.stop() }
        let hosts = cluster.nodes.map { node in
            RaftHost(system: node.system, settings: RaftHostSettings(dataDirectory: "/data/" + node.system.node.name), machines: ["taskjob": { CommandList() }])
        }
        try await cluster.awaitMesh()
        let group = "taskjob-full"
        let coordinator = cluster[0]
        let groups = JobGroups(host: hosts[0], system: coordinator.system, members: { [weak coordinator] in coordinator?.members ?? [] })
        try await cluster.complete("the group opens and commits its first entry", within: 5) {
            try await groups.open(group, for: "full", with: cluster.nodes[1...].map(\.system.node), machine: CommandList(), first: "the spec")
        }
        try await cluster.complete("a second entry commits", within: 5) { try await hosts[0].propose(group: group, command: "second") }

        // The followers' disks fill up: the next entry's write stops both replicas.
        for disk in disks[1...] { disk.capacity = disk.usedBytes }
        let third = Task { try? await hosts[0].propose(group: group, command: "third") }
        try await cluster.run(until: "both followers' replicas stopped", within: 10) {
            for host in hosts[1...] where await host.status(of: group)?.failure == nil { return false }
            return true
        }
        // Still full: a try to start again fails, and the replicas stay stopped.
        try await cluster.run(for: 5)
        for host in hosts[1...] { #expect(await host.status(of: group)?.failure != nil, "no room yet") }

        for disk in disks[1...] { disk.capacity = nil }
        let clock = cluster.clock
        try await cluster.complete("an entry commits once the disks have room", within: 60) {
            while true {
                do {
                    return try await hosts[0].propose(group: group, command: "fourth")
                } catch {
                    try await clock.sleep(for: 0.5)
                }
            }
        }
        try await cluster.run(until: "every replica applied the fourth entry", within: 10) {
            for host in hosts {
                guard let list = await host.stateMachine(of: group) as? CommandList, list.applied.last == "fourth" else { return false }
            }
            return true
        }
        for host in hosts { #expect(await host.status(of: group)?.failure == nil) }
        _ = await third.value
        try await cluster.complete("the hosts stop", within: 5) { for host in hosts { await host.stop() } }
    }
}
