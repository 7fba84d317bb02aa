import Foundation
import SpokesCluster
import SpokesConcurrency
import SpokesConsensus
import SpokesReplication
import SpokesTestKit
import Synchronization
import Testing

/// Raft groups on real in-process nodes on loopback: elections, commits, failover,
/// restarts from the same data directory.
@Suite(.processLane, .timeLimit(.minutes(2)))
struct RaftHostTests {
    @Test func threeReplicasElectOneLeaderThatEveryReplicaFollows() async throws {
        let cluster = try RaftTestCluster(nodes: 3)
        try await cluster.converge()
        try await cluster.open("g", on: [0, 1, 2])
        let leader = try await cluster.leader(of: "g")
        let statuses = await cluster.statuses("g")
        #expect(statuses.count(where: { $0.role == .leader }) == 1)
        #expect(statuses.allSatisfy { $0.leader == cluster.name(leader) })
        await cluster.stopAll()
    }

    @Test func proposalsCommitOnAMajorityAndEveryReplicaAppliesThemOnceInOrder() async throws {
        let cluster = try RaftTestCluster(nodes: 3)
        try await cluster.converge()
        try await cluster.open("g", on: [0, 1, 2])
        let leader = try await cluster.leader(of: "g")
        let follower = (leader + 1) % 3
        var commands: [String] = []
        for number in 1...20 {
            let command = "c\(number)"
            // Every other one through a follower, which forwards it to the leader.
            let commit = try await cluster.propose(command, to: "g", via: number.isMultiple(of: 2) ? follower : leader)
            #expect(commit.result == "\(number)", "the state machine's result comes back to the proposer")
            commands.append(command)
        }
        let expected = commands
        for index in 0..<3 {
            try await eventually("\(cluster.name(index)) applied all 20 commands") { await cluster.applied("g", on: index).count >= 20 }
            #expect(await cluster.applied("g", on: index) == expected, "\(cluster.name(index)) applied each, in order")
        }
        // Every commit timed once, by the leader it was proposed to (forwarded ones too).
        let timed = try #require(cluster.nodes[leader]).raftCommitLatency.snapshot
        #expect(timed.count == 20 && timed.sum > 0 && timed.buckets.last?.count == 20, "\(timed)")
        #expect(try #require(cluster.nodes[follower]).raftCommitLatency.snapshot.count == 0)
        await cluster.stopAll()
    }

    @Test func concurrentProposalsAreAllAppliedOnceInOneOrderEverywhere() async throws {
        let cluster = try RaftTestCluster(nodes: 3)
        try await cluster.converge()
        try await cluster.open("g", on: [0, 1, 2], firstLeader: 0)
        try await cluster.leader(of: "g")
        let hosts = (0..<3).map { cluster.host($0) }
        let attempts = Counter()
        let results = try await withThrowingTaskGroup(of: RaftCommit.self) { tasks in
            for number in 0..<60 {
                tasks.addTask {
                    try await retryingWhileLeaderless("c\(number) commits", unknownOutcomes: true) {
                        attempts.add()
                        return try await hosts[number % 3].propose(group: "g", command: "c\(number)")
                    }
                }
            }
            return try await tasks.reduce(into: [RaftCommit]()) { $0.append($1) }
        }
        #expect(results.count == 60)
        let machines = { () async -> [CommandList] in
            var machines: [CommandList] = []
            for index in 0..<3 { machines.append(await cluster.host(index).stateMachine(of: "g") as? CommandList ?? CommandList()) }
            return machines
        }
        try await eventually("every replica applied the same 60 commands in the same order") {
            let machines = await machines()
            return machines.allSatisfy { $0 == machines[0] } && machines[0].applied.count == 60
        }
        let reference = await machines()[0]
        #expect(Set(reference.applied) == Set((0..<60).map { "c\($0)" }))
        // Only a command proposed again (after an unknown outcome: a leader stepped down)
        // can come twice, and every replica saw the same repeats (equal machines).
        let again = attempts.value - 60
        #expect(reference.repeats <= again, "\(reference.repeats) commands came twice, \(again) were proposed again")
        if again > 0 { print("concurrent proposals: \(again) attempts beyond the first 60 (no leader for a while, or a leader stepped down); \(reference.repeats) commands came twice") }
        await cluster.stopAll()
    }

    /// A replica hears any replica of its group (a leader that added it again), so the
    /// host hears only members, each for itself: a client that got in with the secret and
    /// names itself anything, a member's name included, changes nothing.
    @Test func inAClusterWithASecretGroupsCommitAndMessagesFromNonMembersAreIgnored() async throws {
        let cluster = try RaftTestCluster(nodes: 3, secret: try ClusterSecret("raft-host-test-secret", source: "test"))
        try await cluster.converge()
        try await cluster.open("g", on: [0, 1, 2], firstLeader: 0)
        try await cluster.leader(of: "g")
        #expect(try await cluster.propose("c1", to: "g", via: 1).result == "1")
        var settings = ClusterSettings()
        settings.cluster = cluster.cluster
        settings.secret = cluster.secret
        let client = try ClusterSystem(settings: settings, isMember: false)
        defer { client.shutdown() }
        let peer = try await client.join(try #require(cluster.nodes[1]).system.address)
        let endpoint = try RaftEndpoint.resolve(id: ActorID(node: peer.node, name: RaftEndpoint.wellKnownName), using: client)
        let before = try #require(await cluster.host(1).status(of: "g"))
        let unknownBefore = cluster.host(1).droppedMessages.unknownGroup
        try await endpoint.deliver([RaftEnvelope(group: "g", messages: [.heartbeat(RaftHeartbeat(term: 99, commit: 0))])], from: "intruder")
        try await endpoint.deliver([RaftEnvelope(group: "g", messages: [.heartbeat(RaftHeartbeat(term: 99, commit: 0))])], from: "n1")
        let after = try #require(await cluster.host(1).status(of: "g"))
        #expect(after.term == before.term && after.leader == "n1", "messages from a name outside the cluster, and from a client naming itself n1, changed nothing: \(after)")
        #expect(cluster.host(1).messagesFromNonMembers == 2)
        #expect(cluster.host(1).droppedMessages.unknownGroup == unknownBefore, "neither reached a group")
        await cluster.stopAll()
    }

    @Test func aFollowerToldNotToForwardNamesTheLeader() async throws {
        let cluster = try RaftTestCluster(nodes: 3)
        try await cluster.converge()
        try await cluster.open("g", on: [0, 1, 2], firstLeader: 1)
        let leader = try await cluster.leader(of: "g")
        #expect(leader == 1)
        // n1 learns its leader from n2's first heartbeat; on a loaded machine that may come late.
        try await eventually("n1 knows n2 leads") { await cluster.host(0).status(of: "g")?.leader == "n2" }
        await #expect(throws: RaftHostError.notLeader(group: "g", node: "n1", leader: "n2")) {
            try await cluster.host(0).propose(group: "g", command: "x", forward: false)
        }
        #expect(RaftHostError.notLeader(group: "g", node: "n1", leader: "n2").description == "n1 is not the leader of group 'g': n2 is")
        await #expect(throws: RaftHostError.unknownGroup("h", node: "n1")) { try await cluster.host(0).propose(group: "h", command: "x") }
        await cluster.stopAll()
    }

    @Test func whenTheLeadersNodeDiesAnotherReplicaLeadsAndCommits() async throws {
        let cluster = try RaftTestCluster(nodes: 3)
        try await cluster.converge()
        try await cluster.open("g", on: [0, 1, 2])
        let seconds = try await Self.failover(in: cluster, group: "g")
        print("raft failover on loopback: \(String(format: "%.3f", seconds)) s from the leader's node stopping to a commit")
        // Generous for a loaded 2-core machine; the figure itself is measured in
        // `failoverTimeOverTrials` (issue 19 asks for 2 s on loopback defaults).
        #expect(seconds < 5)
        await cluster.stopAll()
    }

    /// Kills the leader's node, then proposes on the survivors until one commits;
    /// returns the seconds from the kill to that commit. Every command committed before
    /// the kill is still there afterwards.
    static func failover(in cluster: RaftTestCluster, group: String) async throws -> Double {
        let leader = try await cluster.leader(of: group)
        let before = try await cluster.propose("before", to: group, via: leader)
        let survivors = (0..<cluster.names.count).filter { $0 != leader }
        let killed = RealClock().now
        await cluster.kill(leader)
        var attempt = 0
        let committed = try await retryingWhileLeaderless("a survivor commits after \(cluster.name(leader)) died", unknownOutcomes: true) {
            attempt += 1
            return try await cluster.host(survivors[attempt % survivors.count]).propose(group: group, command: "after")
        }
        let seconds = RealClock().now - killed
        #expect(committed.index > before.index && committed.term > before.term)
        for index in survivors {
            try await eventually("\(cluster.name(index)) applied 'after'") { await cluster.applied(group, on: index).contains("after") }
            #expect(await cluster.applied(group, on: index).first == "before", "what was committed before the failover is still there")
        }
        return seconds
    }

    /// The failover figure of ARCHITECTURE.md ("The Raft host"): `SPOKES_FAILOVER_TRIALS=10
    /// swift test --filter failoverTimeOverTrials`.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["SPOKES_FAILOVER_TRIALS"] != nil))
    func failoverTimeOverTrials() async throws {
        let trials = Int(ProcessInfo.processInfo.environment["SPOKES_FAILOVER_TRIALS"] ?? "") ?? 10
        var times: [Double] = []
        for _ in 0..<max(1, trials) {
            let cluster = try RaftTestCluster(nodes: 3, raft: RaftConfiguration())
            try await cluster.converge()
            try await cluster.open("g", on: [0, 1, 2])
            times.append(try await Self.failover(in: cluster, group: "g"))
            await cluster.stopAll()
        }
        let sorted = times.sorted()
        let median = sorted.count.isMultiple(of: 2) ? (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2 : sorted[sorted.count / 2]
        print("raft failover over \(times.count) trials: median \(String(format: "%.3f", median)) s, min \(String(format: "%.3f", sorted.first!)) s, max \(String(format: "%.3f", sorted.last!)) s; all: \(times.map { String(format: "%.3f", $0) }.joined(separator: " "))")
    }

    @Test func aLeaderCutOffFromItsMajorityTellsItsProposersWhenItStepsDown() async throws {
        let cluster = try RaftTestCluster(nodes: 3, proposalTimeout: 12)
        try await cluster.converge()
        try await cluster.open("g", on: [0, 1, 2], firstLeader: 0)
        try await cluster.leader(of: "g")
        try await cluster.propose("c1", to: "g", via: 0)
        await cluster.kill(1)
        await cluster.kill(2)
        let started = RealClock().now
        do {
            let commit = try await cluster.host(0).propose(group: "g", command: "c2")
            Issue.record("a leader without a majority committed \(commit)")
        } catch .outcomeUnknown(let group, _, let reason) {
            #expect(group == "g" && reason == "n1 stopped leading before it committed; a later leader may still commit it")
        }
        let seconds = RealClock().now - started
        #expect(seconds < cluster.settings.proposalTimeout, "told when it stepped down (CheckQuorum), after \(seconds) s, not at the deadline")
        #expect(await cluster.applied("g", on: 0) == ["c1"])
        await cluster.stopAll()
    }

    @Test func aRestartedNodeRecoversItsLogFromDiskAndCatchesUp() async throws {
        let cluster = try RaftTestCluster(nodes: 3)
        try await cluster.converge()
        try await cluster.open("g", on: [0, 1, 2], firstLeader: 0)
        try await cluster.leader(of: "g")
        for number in 1...5 { try await cluster.propose("a\(number)", to: "g", via: 0) }
        try await eventually("n3 applied a1...a5") { await cluster.applied("g", on: 2).count == 5 }
        // What n3 holds on its disk: it may apply entries a majority holds before its own flush ends.
        try await eventually("n3's log is on its disk through a5") {
            guard let status = await cluster.host(2).status(of: "g") else { return false }
            return status.durableIndex == status.lastIndex
        }
        let held = try #require(await cluster.host(2).status(of: "g")?.durableIndex)
        await cluster.kill(2)
        for number in 1...5 { try await cluster.propose("b\(number)", to: "g", via: 0) }
        try cluster.restart(2)
        try await cluster.converge()
        try await cluster.open("g", on: [0, 1, 2], firstLeader: 0, only: [2])
        let recovered = try #require(await cluster.host(2).status(of: "g"))
        #expect(recovered.lastIndex >= held, "n3 recovered its log from disk: \(recovered)")
        let expected = (1...5).map { "a\($0)" } + (1...5).map { "b\($0)" }
        try await eventually("the restarted n3 caught up") { await cluster.applied("g", on: 2) == expected }
        await cluster.stopAll()
    }

    @Test func aReplicaBehindTheLeadersSnapshotCatchesUpFromIt() async throws {
        let cluster = try RaftTestCluster(nodes: 3, snapshotEvery: 4)
        try await cluster.converge()
        try await cluster.open("g", on: [0, 1, 2], firstLeader: 0)
        try await cluster.leader(of: "g")
        await cluster.kill(2)
        for number in 1...20 { try await cluster.propose("c\(number)", to: "g", via: 0) }
        try cluster.restart(2)
        try await cluster.converge()
        try await cluster.open("g", on: [0, 1, 2], firstLeader: 0, only: [2])
        let expected = (1...20).map { "c\($0)" }
        try await eventually("n3 caught up from the leader's snapshot") { await cluster.applied("g", on: 2) == expected }
        #expect(FileManager.default.fileExists(atPath: cluster.folder.file("n3/g/snapshot")), "n3 stored the snapshot it was sent")
        for index in 0..<3 { await cluster.kill(index) }
        for index in 0..<3 { try cluster.restart(index) }
        try await cluster.converge()
        try await cluster.open("g", on: [0, 1, 2], firstLeader: 0)
        let leader = try await cluster.leader(of: "g")
        try await cluster.propose("c21", to: "g", via: leader)
        for index in 0..<3 {
            try await eventually("\(cluster.name(index)) restored its snapshot and applied c21") { await cluster.applied("g", on: index) == expected + ["c21"] }
        }
        await cluster.stopAll()
    }

    @Test func aGroupRestartedWholeFromItsDirectoriesKeepsItsCommands() async throws {
        let cluster = try RaftTestCluster(nodes: 3)
        try await cluster.converge()
        try await cluster.open("g", on: [0, 1, 2])
        let leader = try await cluster.leader(of: "g")
        for number in 1...5 { try await cluster.propose("c\(number)", to: "g", via: leader) }
        for index in 0..<3 { await cluster.kill(index) }
        for index in 0..<3 { try cluster.restart(index) }
        try await cluster.converge()
        try await cluster.open("g", on: [0, 1, 2])
        let newLeader = try await cluster.leader(of: "g")
        try await cluster.propose("c6", to: "g", via: newLeader)
        let expected = (1...6).map { "c\($0)" }
        for index in 0..<3 {
            try await eventually("\(cluster.name(index)) applied c1...c6 after the restart") { await cluster.applied("g", on: index) == expected }
        }
        await cluster.stopAll()
    }

    @Test func aTwoReplicaGroupAndASingleReplicaGroupWork() async throws {
        let cluster = try RaftTestCluster(nodes: 2)
        try await cluster.converge()
        try await cluster.open("pair", on: [0, 1])
        try await cluster.open("solo", on: [1])
        let leader = try await cluster.leader(of: "pair")
        for number in 1...5 {
            #expect(try await cluster.propose("p\(number)", to: "pair", via: leader).result == "\(number)")
            #expect(try await cluster.host(1).propose(group: "solo", command: "s\(number)").result == "\(number)")
        }
        for index in 0..<2 {
            try await eventually("\(cluster.name(index)) applied p1...p5") { await cluster.applied("pair", on: index).count == 5 }
        }
        #expect(await cluster.applied("solo", on: 1) == (1...5).map { "s\($0)" })
        #expect(await cluster.host(0).status(of: "solo") == nil, "n1 holds no replica of solo")
        await cluster.stopAll()
    }

    @Test func aRestartedNodeReopensItsGroupsAsTheyWereCreatedAndNoOtherWay() async throws {
        let cluster = try RaftTestCluster(nodes: 1)
        try await cluster.open("g", on: [0])
        _ = try await cluster.host(0).propose(group: "g", command: "c1")
        await cluster.kill(0)
        try cluster.restart(0)
        let stored = await cluster.host(0).storedGroups()
        #expect(stored == ["g": try RaftGroup(replicas: ["n1"])])
        await #expect(throws: RaftHostError.definitionChanged(group: "g", node: "n1", stored: "replicas n1", given: "replicas n1, n2")) {
            try await cluster.host(0).open(group: "g", try RaftGroup(replicas: ["n1", "n2"]), machine: CommandList())
        }
        // The same replicas and first leader, created again (another creation number): a
        // second first leader of term 1 with another log, refused (review, issue 29 §1.7).
        await #expect(throws: RaftHostError.self) {
            try await cluster.host(0).open(group: "g", try RaftGroup(replicas: ["n1"], creation: 7), machine: CommandList())
        }
        try await cluster.host(0).open(group: "g", stored["g"]!, machine: CommandList())
        try await eventually("n1 applied c1 again after its restart") { await cluster.applied("g", on: 0) == ["c1"] }
        #expect(try await cluster.host(0).propose(group: "g", command: "c2").result == "2")
        await cluster.stopAll()
    }

    @Test func groupViewsSayWhereEachGroupsReplicasAndLeaderAreAsThisReplicaSeesThem() async throws {
        let cluster = try RaftTestCluster(nodes: 2)
        try await cluster.converge()
        try await cluster.open("taskjob-map-1", on: [0, 1], firstLeader: 1)
        try await cluster.open("g", on: [0], firstLeader: 0)
        #expect(try await cluster.propose("c1", to: "taskjob-map-1", via: 0).result == "1")
        // n1 learns its leader from n2's first heartbeat; on a loaded machine that may come late.
        var views: [ReplicaGroupView] = []
        try await eventually("n1 sees n2 lead the job's group and itself lead g") {
            views = await cluster.host(0).groupViews()
            return views.map(\.leader) == ["n1", "n2"] && views.last?.commitIndex ?? 0 >= 1
        }
        #expect(views.map(\.id) == ["g", "taskjob-map-1"])
        #expect(views.map(\.job) == [nil, "map-1"] && views.map(\.kind) == ["g", "taskjob"])
        #expect(views.map(\.replicas) == [["n1"], ["n1", "n2"]])
        #expect(views.allSatisfy { $0.node == "n1" })
        #expect(views.map(\.role) == ["leader", "follower"])
        #expect(views.allSatisfy { $0.term >= 1 })
        #expect(await cluster.host(1).groupViews().map { [$0.node] + $0.replicas } == [["n2", "n1", "n2"]], "n2 holds only the job's group")
        await cluster.host(0).remove(group: "g", .abandoned)
        #expect(await cluster.host(0).groupViews().map(\.id) == ["taskjob-map-1"])
        await cluster.stopAll()
    }

    @Test func groupIDsMustNameADirectory() async throws {
        let cluster = try RaftTestCluster(nodes: 1)
        let group = try RaftGroup(replicas: ["n1"])
        for bad in ["", "../x", ".hidden", "a/b", String(repeating: "x", count: 129)] {
            await #expect(throws: RaftHostError.self, "'\(bad)' refused") {
                try await cluster.host(0).open(group: bad, group, machine: CommandList())
            }
        }
        await #expect(throws: RaftHostError.notAReplica(group: "g", node: "n1")) {
            try await cluster.host(0).open(group: "g", try RaftGroup(replicas: ["n2"]), machine: CommandList())
        }
        try await cluster.host(0).open(group: "job-1.shard_2", group, machine: CommandList())
        await #expect(throws: RaftHostError.groupExists("job-1.shard_2", node: "n1")) {
            try await cluster.host(0).open(group: "job-1.shard_2", group, machine: CommandList())
        }
        await cluster.stopAll()
    }
}

/// A count several tasks add to.
final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    func add() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}
