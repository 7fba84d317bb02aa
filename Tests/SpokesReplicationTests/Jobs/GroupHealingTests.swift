import Foundation
import SpokesCluster
import SpokesClusterTestKit
import SpokesConcurrency
import SpokesConsensus
import SpokesTestKit
import Testing
@testable import SpokesReplication
@testable import SpokesJobs

/// Groups that heal (issue 29 §2): a job's replica on a node dead for
/// `jobs.replace_after` is replaced by an alive member, one change at a time, so one
/// death after another never leaves the job without a majority.
@Suite(.simulated) struct GroupHealingTests {
    @Test func aDeadReplicaIsRemovedBeforeAnAliveMemberIsAdded() {
        let alive: Set<String> = ["a", "b", "d", "e"]
        func next(_ replicas: [String], deadSince: [String: Double], now: Double) -> JobGroups.ReplicaChange? {
            JobGroups.nextReplicaChange(group: "taskjob-x", replicas: replicas, me: "a", target: 3, alive: alive, deadSince: deadSince, now: now, replaceAfter: 30)
        }
        #expect(next(["a", "b", "c"], deadSince: ["c": 100], now: 129) == nil, "dead for less than replace_after")
        #expect(next(["a", "b", "c"], deadSince: ["c": 100], now: 130) == .remove("c"))
        let added = next(["a", "b"], deadSince: ["c": 100], now: 130)
        #expect(added == .add("d") || added == .add("e"), "an alive member that holds no replica")
        #expect(next(["a", "b", "d"], deadSince: ["c": 100], now: 130) == nil, "three replicas on alive members")
        let spread = Set((0..<40).compactMap { group in
            JobGroups.nextReplicaChange(group: "taskjob-\(group)", replicas: ["a", "b"], me: "a", target: 3, alive: alive, deadSince: [:], now: 0, replaceAfter: 30)
        })
        #expect(spread == [.add("d"), .add("e")], "groups spread their new replicas over the members")
    }

    @Test func aReplicaItsLeaderHasNotHeardForReplaceAfterIsRemovedThoughItsNodeLives() {
        let alive: Set<String> = ["a", "b", "c", "d"]
        func next(_ replicas: [String], heardAt: [String: Double], excluded: Set<String> = [], now: Double) -> JobGroups.ReplicaChange? {
            JobGroups.nextReplicaChange(group: "taskjob-x", replicas: replicas, me: "a", target: 3, alive: alive, deadSince: [:],
                                        heardAt: heardAt, excluded: excluded, now: now, replaceAfter: 30)
        }
        #expect(next(["a", "b", "c"], heardAt: ["b": 129, "c": 100], now: 129) == nil, "silent for less than replace_after")
        #expect(next(["a", "b", "c"], heardAt: ["b": 129, "c": 100], now: 130) == .remove("c"), "c's node lives, but its replica says nothing")
        #expect(next(["a", "b"], heardAt: ["b": 130], excluded: ["c"], now: 130) == .add("d"), "not the silent one again")
        #expect(next(["a", "b"], heardAt: ["b": 130], excluded: ["c", "d"], now: 130) == nil, "no member left to add")
    }

    /// Four nodes; a group on three of them. n2's disk fills: its replica's flush fails
    /// and it stops, while n2 itself runs on and stays alive to membership. Its leader has
    /// heard nothing from it for `replace_after`, so it removes it and adds n3, which
    /// holds every command; n2's stopped replica learns it was replaced and drops the
    /// group. Before, the group ran on two replicas until n2 restarted, and one more
    /// failure stalled its job.
    @Test(.hangGuard)
    func aReplicaWhoseStorageFailedIsReplacedThoughItsNodeLives() async throws {
        let disks = (0..<4).map { _ in SimulatedDisk() }
        let cluster = try SimulatedCluster(4, configure: { _, settings in settings.jobReplaceAfter = 30 }, disk: { disks[$0] })
        defer { cluster.stop() }
        let healing = try await HealingGroup(on: cluster)
        defer { healing.stopWatching() }
        let (names, group, hosts) = (healing.names, healing.group, healing.hosts)
        func propose(_ command: String) async throws { try await healing.propose(command, at: 0) }
        func replicas() async -> [String] { await healing.replicas(at: 0) }
        func applied(at index: Int) async -> [String] { await healing.applied(at: index) }
        try await propose("one")
        try await cluster.run(until: "n2 holds the first command", within: 5) { await applied(at: 2) == ["one"] }

        disks[2].capacity = disks[2].usedBytes
        try await propose("two")
        try await cluster.run(until: "n2's replica stops", within: 5) { await hosts[2].status(of: group)?.failure != nil }
        try await cluster.holds("n2's replica stays for replace_after, n2 alive", for: 25) {
            await replicas().contains(names[2]) && cluster[0].members.contains { $0.node.name == names[2] && $0.state == .alive }
        }
        try await cluster.run(until: "n2's replica is replaced by n3's", within: 20) { await replicas() == [names[0], names[1], names[3]] }
        try await cluster.run(until: "n3 holds every command", within: 10) { await applied(at: 3) == ["one", "two"] }
        try await propose("three")
        try await cluster.run(until: "n2 drops its stopped replica", within: 30) { await hosts[2].status(of: group) == nil }
        #expect(await replicas() == [names[0], names[1], names[3]], "n2 is not added back while it runs on")
        for host in hosts { await host.stop() }
    }

    /// Five nodes; a group on three of them. Its follower's node dies: 30 s later the
    /// group runs on the other two and a new member, which holds every command. Then the
    /// leader's node dies too: the two left elect, replace it, and commit on. When both
    /// dead nodes come back, they learn they were replaced and drop their replicas.
    @Test(.hangGuard)
    func aGroupOutlivesTwoDeathsOneAfterTheOther() async throws {
        let cluster = try SimulatedCluster(5, configure: { _, settings in settings.jobReplaceAfter = 30 }, disk: { _ in SimulatedDisk() })
        defer { cluster.stop() }
        let healing = try await HealingGroup(on: cluster)
        defer { healing.stopWatching() }
        let (names, group) = (healing.names, healing.group)
        func propose(_ command: String, at index: Int) async throws { try await healing.propose(command, at: index) }
        func replicas(at index: Int) async -> [String] { await healing.replicas(at: index) }
        func applied(at index: Int) async -> [String] { await healing.applied(at: index) }
        let hosts = healing.hosts
        try await propose("one", at: 0)

        // n2 dies.
        cluster.isolate(SimulatedCluster.host(2))
        try await cluster.holds("n2's replica stays for replace_after", for: 25) { await replicas(at: 0).contains(names[2]) }
        try await cluster.run(until: "n2's replica is replaced", within: 20) {
            let now = await replicas(at: 0)
            return now.count == 3 && !now.contains(names[2])
        }
        let first = await replicas(at: 0)
        let newcomer = try #require(first.first { !names[0...2].contains($0) })
        let newIndex = try #require(names.firstIndex(of: newcomer))
        try await cluster.run(until: "the new replica holds every command", within: 10) { await applied(at: newIndex) == ["one"] }
        try await propose("two", at: 0)

        // The leader's node, n0, dies: n1 and the newcomer elect a leader and replace n0.
        cluster.isolate(SimulatedCluster.host(0))
        try await cluster.run(until: "n0's replica is replaced", within: 60) {
            let now = await replicas(at: 1)
            return now.count == 3 && !now.contains(names[0]) && !now.contains(names[2])
        }
        let second = await replicas(at: 1)
        let last = try #require(second.first { $0 != names[1] && $0 != newcomer })
        let lastIndex = try #require(names.firstIndex(of: last))
        let leader = try #require(await hosts[1].status(of: group)?.leader)
        try await propose("three", at: try #require(names.firstIndex(of: leader)))
        try await cluster.run(until: "every replica holds every command", within: 10) {
            for index in [1, newIndex, lastIndex] where await applied(at: index) != ["one", "two", "three"] { return false }
            return true
        }

        // n0 and n2 come back with their logs: they are out of the group, and drop it.
        cluster.network.heal()
        try await cluster.run(until: "the replaced replicas drop the group", within: 30) {
            let n0 = await hosts[0].status(of: group), n2 = await hosts[2].status(of: group)
            return n0 == nil && n2 == nil
        }
        #expect(await replicas(at: 1) == second)
        for host in hosts { await host.stop() }
    }
}

/// A group `taskjob-x` on the first three nodes of `cluster` (on their runtimes' disks,
/// under `/data/NAME`), n0 its first leader, and every node's watcher healing it as a
/// node wires it: what each healing test starts from.
struct HealingGroup {
    let cluster: SimulatedCluster
    let hosts: [RaftHost]
    let names: [String]
    let group = "taskjob-x"
    private let watchers: [Task<Void, Never>]

    init(on cluster: SimulatedCluster) async throws {
        self.cluster = cluster
        hosts = cluster.nodes.map { node in
            RaftHost(system: node.system, settings: RaftHostSettings(dataDirectory: "/data/" + node.system.node.name),
                     machines: ["taskjob": { CommandList() }])
        }
        names = cluster.nodes.map(\.system.node.name)
        try await cluster.awaitMesh()
        watchers = zip(cluster.nodes, hosts).map { node, host in
            JobGroups(host: host, system: node.system, members: { [weak node] in node?.members ?? [] }).watch(
                kind: "taskjob", job: { _, _ in JobGroups.JobState(job: "x", finished: false) }, isRunning: { _ in true },
                abandon: { _ in }, takeOver: { _, _ in })
        }
        let definition = try RaftGroup(replicas: Array(names[0...2]), firstLeader: names[0], creation: 7)
        for index in 0...2 { try await hosts[index].open(group: group, definition, machine: CommandList()) }
    }

    /// Commits `command` through node `index`'s replica (which leads, or finds who does).
    func propose(_ command: String, at index: Int) async throws {
        let (host, system, group) = (hosts[index], cluster[index].system, group)
        _ = try await cluster.complete("\(command) commits", within: 10) {
            try await JobGroups(host: host, system: system, members: { [] }).proposeWhileElecting(command, to: group)
        }
    }

    func replicas(at index: Int) async -> [String] { await hosts[index].status(of: group)?.replicas ?? [] }
    func applied(at index: Int) async -> [String] { (await hosts[index].stateMachine(of: group) as? CommandList)?.applied ?? [] }
    func stopWatching() { for watcher in watchers { watcher.cancel() } }
}
