import Foundation
import SpokesCluster
import SpokesConcurrency
import SpokesConsensus
import SpokesReplication
import SpokesTestKit
import Testing

/// A state machine that remembers every command it applied, in order, once: a command
/// proposed again (after an unknown outcome) is counted in `repeats` and changes nothing,
/// as the job layer's idempotent commands do. A command's result is its position (1, 2,
/// ...).
struct CommandList: ReplicatedStateMachine, Equatable {
    var applied: [String] = []
    var repeats = 0

    mutating func apply(_ command: String) -> String {
        if let position = applied.firstIndex(of: command) {
            repeats += 1
            return "\(position + 1)"
        }
        applied.append(command)
        return "\(applied.count)"
    }

    func snapshot() -> String {
        String(decoding: try! JSONEncoder().encode(applied), as: UTF8.self)
    }

    mutating func restore(_ snapshot: String) throws {
        applied = try JSONDecoder().decode([String].self, from: Data(snapshot.utf8))
    }
}

/// Real nodes `n1`...`nN` on loopback (discovery of the test's own), each with a
/// `RaftHost` whose data directory is `n<i>` in a temporary folder that outlives
/// restarts within the test.
final class RaftTestCluster {
    let folder: TemporaryDirectory
    let cluster = "raft-\(UUID().uuidString.prefix(8))"
    let discoveryPort = TestPorts.discovery()
    let settings: RaftHostSettings
    private(set) var nodes: [ClusterNode?] = []
    private(set) var hosts: [RaftHost?] = []

    let secret: ClusterSecret?

    /// Raft's timing for the suite: elections after 1.5-3 s of silence, not 0.6-1.2 s,
    /// so a heartbeat the full suite's load holds back does not change the leader under a
    /// test that counts on it (a cut-off leader steps down after two quiet windows of 1.5 s,
    /// 3-4.5 s: a test that waits for that gives its proposals longer than the default 5 s).
    /// The failover figure is measured at the defaults (`failoverTimeOverTrials`).
    static let underLoad = RaftConfiguration(electionTimeout: 1.5...3)

    init(
        nodes count: Int, snapshotEvery: Int = 1000, secret: ClusterSecret? = nil, raft: RaftConfiguration = RaftTestCluster.underLoad,
        proposalTimeout: Double = 5
    ) throws {
        self.secret = secret
        folder = try TemporaryDirectory()
        settings = RaftHostSettings(dataDirectory: folder.path, raft: raft, proposalTimeout: proposalTimeout, snapshotEvery: snapshotEvery)
        for index in 0..<count {
            let (node, host) = try start(name(index))
            nodes.append(node)
            hosts.append(host)
        }
    }

    func name(_ index: Int) -> String { "n\(index + 1)" }
    var names: [String] { (0..<nodes.count).map(name) }

    private func start(_ name: String) throws -> (ClusterNode, RaftHost) {
        var clusterSettings = ClusterSettings()
        clusterSettings.cluster = cluster
        clusterSettings.nodeName = name
        clusterSettings.discoveryPort = discoveryPort
        clusterSettings.discoveryInterval = 0.05
        // The full suite loads two cores heavily: a late heartbeat must not drop the
        // connections Raft's messages ride on (the tests stop nodes outright, which
        // drops them at once anyway).
        clusterSettings.suspectTimeout = 2
        clusterSettings.deadTimeout = 4
        clusterSettings.secret = secret
        let node = try ClusterNode(settings: clusterSettings)
        var settings = settings
        settings.dataDirectory = folder.file(name)
        let host = RaftHost(system: node.system, settings: settings, commitLatency: node.raftCommitLatency)
        node.start()
        return (node, host)
    }

    func host(_ index: Int) -> RaftHost { hosts[index]! }

    /// Waits until every running node sees every other running node alive.
    func converge() async throws {
        let running = nodes.compactMap { $0 }
        try await eventually("\(running.count) nodes see each other alive") {
            running.allSatisfy { node in
                running.allSatisfy { other in other === node || node.members.contains { $0.node == other.system.node && $0.state == .alive } }
            }
        }
    }

    /// Opens `group` (replicas on the nodes at `indices`) with a `CommandList` each, on
    /// those nodes or only on `only`.
    func open(_ group: String, on indices: [Int], firstLeader: Int? = nil, only: [Int]? = nil) async throws {
        let definition = try RaftGroup(replicas: indices.map(name), firstLeader: firstLeader.map(name))
        for index in only ?? indices { try await host(index).open(group: group, definition, machine: CommandList()) }
    }

    /// The running replicas' statuses of `group`.
    func statuses(_ group: String) async -> [RaftGroupStatus] {
        var statuses: [RaftGroupStatus] = []
        for host in hosts.compactMap({ $0 }) {
            if let status = await host.status(of: group) { statuses.append(status) }
        }
        return statuses
    }

    /// Waits until one running replica leads `group` and every running replica follows it
    /// in its term; returns the leader's index.
    @discardableResult
    func leader(of group: String, seconds: Double = 30) async throws -> Int {
        try await eventually("one leader of \(group) that every replica follows", seconds: seconds) {
            let statuses = await statuses(group)
            let leaders = statuses.filter { $0.role == .leader }
            guard leaders.count == 1, let leader = leaders.first else { return false }
            return statuses.allSatisfy { $0.leader == leader.replica && $0.term == leader.term }
        }
        let leader = await statuses(group).first { $0.role == .leader }!.replica
        return names.firstIndex(of: leader)!
    }

    /// Proposes `command` to `group` through node `index` (see `retryingWhileLeaderless`),
    /// again also after an unknown outcome (`CommandList` applies a command once).
    @discardableResult
    func propose(_ command: String, to group: String, via index: Int) async throws -> RaftCommit {
        let host = host(index)
        return try await retryingWhileLeaderless("\(name(index)) commits \(command) to \(group)", unknownOutcomes: true) {
            try await host.propose(group: group, command: command)
        }
    }

    /// How often `CommandList` on node `index` saw a command again.
    func repeats(_ group: String, on index: Int) async -> Int {
        (await host(index).stateMachine(of: group) as? CommandList)?.repeats ?? 0
    }

    /// What the replica on `index` applied of `group`.
    func applied(_ group: String, on index: Int) async -> [String] {
        (await host(index).stateMachine(of: group) as? CommandList)?.applied ?? []
    }

    /// Stops node `index` and its host at once, as a crash would (unflushed writes lost).
    func kill(_ index: Int) async {
        await hosts[index]?.stop()
        if let node = nodes[index] { stopAtOnce(node) }
        hosts[index] = nil
        nodes[index] = nil
    }

    /// Starts node `index` again under its name, with the same data directory.
    func restart(_ index: Int) throws {
        let (node, host) = try start(name(index))
        nodes[index] = node
        hosts[index] = host
    }

    /// `ClusterNode.stop()` without waiting for goodbyes to go out.
    private func stopAtOnce(_ node: ClusterNode) { node.stop() }

    func stopAll() async {
        for index in nodes.indices { await kill(index) }
    }
}

/// Waits (at most `seconds`) until `condition` holds, looking every 5 ms; records an
/// issue naming `what` and throws if it never does. The default bound is generous: in the
/// full suite these groups share two cores with hundreds of tests, and a proposal that
/// meets a change of leader waits out a proposal timeout (5 s) before it is retried.
func eventually(_ what: String, seconds: Double = 30, _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while try await !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("not within \(seconds) s: \(what)")
            throw TimeoutError(seconds: seconds)
        }
        try await Task.sleep(for: .milliseconds(5))
    }
}

/// Runs `body` again (for at most 10 s) while it fails because the group has no leader
/// right now, the leader cannot be reached, or the command was lost in a change of
/// leader (never applied, so trying again applies it once), and with `unknownOutcomes`
/// also when the outcome is unknown (for idempotent commands only). On a loaded 2-core
/// machine a leader's heartbeats can come late enough that it steps down (CheckQuorum),
/// so any test may meet an election.
func retryingWhileLeaderless<T>(_ what: String, unknownOutcomes: Bool = false, _ body: () async throws -> T) async throws -> T {
    var value: T?
    try await eventually(what) {
        do {
            value = try await body()
            return true
        } catch let error as RaftHostError {
            switch error {
            case .notLeader, .leaderUnreachable, .lostInLeaderChange: return false
            case .outcomeUnknown where unknownOutcomes: return false
            default: throw error
            }
        }
    }
    return value!
}
