import SpokesConcurrency
import Foundation
import SpokesCluster
import SpokesTestKit
import Testing
@testable import SpokesCLI
@testable import SpokesCluster

/// Real `spokes node` processes on loopback, each test on a discovery port and cluster
/// name of its own.
@Suite(.processLane, .timeLimit(.minutes(2)))
struct ClusterProcessTests {
    let cluster = "proc-\(UUID().uuidString.prefix(8))"
    let discoveryPort = String(TestPorts.discovery())

    var flags: [String] { ["--cluster", cluster, "--discovery-port", discoveryPort] }

    var clientSettings: ClusterSettings {
        var settings = ClusterSettings()
        settings.cluster = cluster
        return settings
    }

    func members(of node: NodeProcess) async throws -> [MemberStatus] {
        try await StatusCommand.fetchMembers(from: node.address, settings: clientSettings, timeout: 5)
    }

    /// Asks `node` for its members until `condition` holds, at most `seconds`; returns the
    /// seconds it took.
    @discardableResult
    func waitUntil(_ node: NodeProcess, seconds: Double = 10, _ what: String,
                   _ condition: ([MemberStatus]) -> Bool) async throws -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        var last: [MemberStatus] = []
        while clock.now - start < .seconds(seconds) {
            last = try await members(of: node)
            if condition(last) { return (clock.now - start).seconds }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("\(node.name) did not see \(what) within \(seconds) s: \(last.map { "\($0.name)=\($0.state)" })")
        return seconds
    }

    @Test func threeNodesConvergeAKilledOneDiesAndARestartedOneRejoins() async throws {
        let nodes = try await NodeProcess.start(3) { try await NodeProcess(name: "p\($0)", flags: flags) }
        try await waitUntil(nodes[0], "3 alive members") { $0.count == 3 && $0.allSatisfy { $0.state == "alive" } }
        let oldIncarnation = try #require(try await members(of: nodes[2]).first?.incarnation)

        // A call in flight to p2 when it is killed fails at once, not at its 30 s deadline.
        var settings = clientSettings
        settings.callTimeout = 30
        let client = try ClusterSystem(settings: settings, isMember: false)
        defer { client.shutdown() }
        let peer = try await client.join(nodes[2].address)
        let status = try NodeStatus.resolve(id: ActorID(node: peer.node, name: NodeStatus.wellKnownName), using: client)
        let call = Task { try await status.ping(delay: 30) }
        while client.pendingCallCount == 0 { await Task.yield() }
        let clock = ContinuousClock()
        let killed = clock.now
        nodes[2].kill(SIGKILL)
        do {
            _ = try await call.value
            Issue.record("the call to a killed node returned")
        } catch let error as RemoteCallError {
            guard case .peerDisconnected(let node, _) = error else {
                Issue.record("expected peer disconnected, got \(error)")
                return
            }
            #expect(node == "p2")
        }
        #expect(clock.now - killed < .seconds(5), "failed long before the 30 s deadline")

        let deadAfter = try await waitUntil(nodes[0], "p2 dead") { members in members.contains { $0.name == "p2" && $0.state == "dead" } }
        #expect(deadAfter < 5, "dead \(deadAfter) s after SIGKILL")

        let restarted = try await NodeProcess(name: "p2", flags: flags)
        try await waitUntil(nodes[0], "p2 alive again") { members in
            members.contains { $0.name == "p2" && $0.state == "alive" && $0.incarnation != oldIncarnation }
        }
        for node in nodes + [restarted] where node.name != "p2" || node === restarted {
            node.kill(SIGTERM)
            #expect(await node.waitForExit() == 0, "\(node.name) exits 0 on SIGTERM")
        }
    }

    @Test func aFrozenNodeTurnsSuspectThenDeadByHeartbeatTimeout() async throws {
        let nodes = try await NodeProcess.start(2) { try await NodeProcess(name: "f\($0)", flags: flags) }
        try await waitUntil(nodes[0], "f1 alive") { $0.contains { $0.name == "f1" && $0.state == "alive" } }
        // SIGSTOP keeps f1's sockets open: only the missing heartbeats can tell.
        nodes[1].kill(SIGSTOP)
        defer { nodes[1].kill(SIGKILL) }
        try await waitUntil(nodes[0], "f1 suspect or dead") { $0.contains { $0.name == "f1" && ($0.state == "suspect" || $0.state == "dead") } }
        let deadAfter = try await waitUntil(nodes[0], "f1 dead") { $0.contains { $0.name == "f1" && $0.state == "dead" } }
        #expect(deadAfter < 5)
        nodes[0].kill(SIGTERM)
    }

    /// Review (issue 29 §1.7): two processes with one name and data directory shared Raft
    /// groups and could vote twice. The second is refused, naming the first.
    @Test func aSecondNodeOnTheSameNameAndDataDirectoryIsRefused() async throws {
        let first = try await NodeProcess(name: "twin", flags: flags)
        defer { first.kill(SIGTERM) }
        let second = await CommandRun.spokes(["node", "--name", "twin"] + flags, environment: ["SPOKES_DATA_DIRECTORY": first.dataDirectory.path])
        #expect(second.status != 0)
        #expect(second.standardError.contains("in use by another process") && second.standardError.contains("vote twice"), "\(second.standardError)")
    }

    @Test func aConnectionThatNeverSaysHelloIsClosedAtTheHandshakeDeadline() async throws {
        let node = try await NodeProcess(name: "mute", flags: flags)
        defer { node.kill(SIGTERM) }
        let fd = try Socket.connect(to: node.address, timeout: 2)
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let clock = ContinuousClock()
        let start = clock.now
        // Blocks until the node hangs up (0) or the 10 s receive timeout (-1), on a
        // thread of its own rather than the cooperative pool.
        let received = await runBlocking("test.recv") {
            var byte: UInt8 = 0
            return recv(fd, &byte, 1, 0)
        }
        #expect(received == 0, "the node closed the silent connection")
        #expect(clock.now - start < .seconds(8))
        #expect(try await members(of: node).first?.name == "mute", "and still serves honest clients")
    }

    @Test func statusFindsANodeByDiscoveryAndPrintsJSON() async throws {
        let node = try await NodeProcess(name: "solo", flags: flags)
        defer { node.kill(SIGTERM) }
        let run = await CommandRun.spokes(["status", "--json"] + flags)
        #expect(run.status == 0, "stderr: \(run.standardError)")
        let members = try #require(try run.json()["members"] as? [[String: Any]])
        #expect(members.map { $0["name"] as? String } == ["solo"])
        #expect(Set(members[0].keys).isSuperset(of: ["name", "address", "state", "slots", "slotsInUse", "waitingSlots", "waitingSlotsInUse", "running", "completed"]))
    }

    @Test func aClientOfAnotherClusterIsRefusedWithAClearMessage() async throws {
        let node = try await NodeProcess(name: "guarded", flags: flags)
        defer { node.kill(SIGTERM) }
        let run = await CommandRun.spokes(["status", "--to", node.address.description, "--cluster", "intruders"])
        #expect(run.status == 1)
        #expect(run.standardError.contains("the node at \(node.address) refused this client: guarded is a node of cluster '\(cluster)', not 'intruders'"),
                "\(run.standardError)")
    }

    /// `--to` without a cluster talks to that node's cluster; a cluster named anywhere
    /// (flag, file, environment) is still checked.
    @Test func aClientThatNamesANodeButNoClusterTalksToThatNodesCluster() async throws {
        let node = try await NodeProcess(name: "lab", flags: flags)
        defer { node.kill(SIGTERM) }
        let status = await CommandRun.spokes(["status", "--to", node.address.description, "--json"])
        #expect(status.status == 0, "\(status.standardError)")
        #expect((try? status.json()["members"] as? [[String: Any]])??.first?["name"] as? String == "lab")
        let jobs = await CommandRun.spokes(["jobs", "--to", node.address.description])
        #expect(jobs.status == 0 && jobs.standardOutput.contains("no jobs"), "\(jobs.standardError)")
        let fromEnvironment = await CommandRun.spokes(["status", "--to", node.address.description], environment: ["SPOKES_CLUSTER": "elsewhere"])
        #expect(fromEnvironment.status == 1 && fromEnvironment.standardError.contains("not 'elsewhere'"), "\(fromEnvironment.standardError)")
        try await withTemporaryFile("cluster: elsewhere\n", named: "cluster.yaml") { config in
            let fromFile = await CommandRun.spokes(["status", "--to", node.address.description, "--config", config])
            #expect(fromFile.status == 1 && fromFile.standardError.contains("not 'elsewhere'"), "\(fromFile.standardError)")
        }
    }

    @Test func statusShowsEveryAliveMembersFiguresAndATotal() async throws {
        let nodes = try await NodeProcess.start(2) {
            try await NodeProcess(name: "t\($0)", flags: flags + ["--slots", "\(2 + $0)", "--waiting-slots", "\(100 + $0)"])
        }
        defer { nodes.forEach { $0.kill(SIGTERM) } }
        try await waitUntil(nodes[0], "2 alive members") { $0.count == 2 && $0.allSatisfy { $0.state == "alive" } }
        let run = await CommandRun.spokes(["status", "--to", nodes[0].address.description, "--json"] + flags)
        #expect(run.status == 0, "\(run.standardError)")
        let report = try run.json()
        let members = try #require(report["members"] as? [[String: Any]])
        #expect(members.map { $0["name"] as? String } == ["t0", "t1"])
        #expect(members.allSatisfy { $0["running"] is Int && $0["completed"] is Int && $0["uptime"] is Double }, "every member's own figures: \(members)")
        #expect(members.map { $0["waitingSlots"] as? Int } == [100, 101] && members.allSatisfy { $0["slotsInUse"] as? Int == 0 && $0["waitingSlotsInUse"] as? Int == 0 },
                "both budgets, in use and total: \(members)")
        let total = try #require(report["total"] as? [String: Int])
        #expect(total["alive"] == 2 && total["slots"] == 5 && total["waitingSlots"] == 201 && total["running"] == 0, "\(total)")
        let text = await CommandRun.spokes(["status", "--to", nodes[0].address.description] + flags)
        let lines = text.standardOutput.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("t1 ") && !$0.contains(" - ") }, "\(text.standardOutput)")
        #expect(lines.contains { $0.hasPrefix("t1 ") && $0.contains(" 0/3 ") && $0.contains(" 0/101 ") }, "\(text.standardOutput)")
        #expect(lines.contains { $0.hasPrefix("total ") && $0.contains("2 of 2 alive") && $0.contains(" 0/5 ") && $0.contains(" 0/201 ") }, "\(text.standardOutput)")
    }

    @Test func stopAsksANodeToLeaveAndExitAsSigtermDoes() async throws {
        let nodes = try await NodeProcess.start(2) { try await NodeProcess(name: "q\($0)", flags: flags) }
        defer { nodes.forEach { $0.kill(SIGKILL) } }
        try await waitUntil(nodes[0], "q1 alive") { $0.contains { $0.name == "q1" && $0.state == "alive" } }
        let run = await CommandRun.spokes(["stop", "--to", nodes[1].address.description] + flags)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.contains("q1 at \(nodes[1].address) left the cluster"), "\(run.standardOutput)")
        #expect(await nodes[1].waitForExit() == 0, "q1 exits 0, as on SIGTERM")
        try await waitUntil(nodes[0], "q1 gone") { !$0.contains { $0.name == "q1" && $0.state == "alive" } }
        let missing = await CommandRun.spokes(["stop"] + flags)
        #expect(missing.status == 2 && missing.standardError.contains("--to"), "\(missing.standardError)")
    }

    /// Every line a node logs starts with an ISO-8601 UTC time and a level; `~` in its
    /// data directory is $HOME.
    @Test func nodeLogLinesStartWithATimeAndALevel() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let node = try await NodeProcess(name: "talker", flags: flags, environment: ["HOME": home.path, "SPOKES_DATA_DIRECTORY": "~/records"], readLog: true)
        defer { node.kill(SIGKILL) }
        let handle = try #require(node.log)
        let text = await readOutput(of: handle, until: "job records in")
        let lines = text.split(separator: "\n")
        let pattern = #/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z (DEBUG|INFO|WARNING|ERROR) +\[talker\] \S/#
        #expect(!lines.isEmpty && lines.allSatisfy { $0.firstMatch(of: pattern) != nil }, "\(text)")
        #expect(text.contains("job records in \(home.path)/records"), "~ is $HOME: \(text)")
        node.kill(SIGTERM)
        let rest = await runBlocking("test.log-rest") { String(decoding: DescriptorReading.all(of: handle.fileDescriptor), as: UTF8.self) }
        #expect(rest.split(separator: "\n").allSatisfy { $0.firstMatch(of: pattern) != nil }, "\(rest)")
        #expect(rest.contains("stopping: telling peers we leave"))
    }

    @Test func aNodeWithADashboardServesItAndStatusSaysWhere() async throws {
        let node = try await NodeProcess(name: "watched", flags: flags + ["--dashboard", "0"])
        defer { node.kill(SIGTERM) }
        let address = try #require(node.dashboard, "the ready line names the dashboard")
        #expect(address.hasPrefix("http://127.0.0.1:") && address.hasSuffix("/"), "\(address)")
        let port = try #require(UInt16(address.dropFirst("http://127.0.0.1:".count).dropLast()))
        // An open cluster: no token; the page and the API answer on loopback.
        let members = try await runBlocking("test.dashboard") { () throws -> Data in
            try Data(contentsOf: URL(string: "http://127.0.0.1:\(port)/api/members")!)
        }
        let body = try #require(try JSONSerialization.jsonObject(with: members) as? [String: Any])
        #expect(body["node"] as? String == "watched")
        let run = await CommandRun.spokes(["status", "--to", node.address.description] + flags)
        #expect(run.standardOutput.contains("dashboard of watched: \(address)"), "\(run.standardOutput)")
    }

    @Test func nodeFlagsAreChecked() async {
        let lan = await CommandRun.spokes(["node", "--discovery", "lan"])
        #expect(lan.status == 2)
        #expect(lan.standardError.contains("--broadcast"))
        let seed = await CommandRun.spokes(["node", "--seed", "127.0.0.1:7000"])
        #expect(seed.status == 2)
        #expect(seed.standardError.contains("Use --peer HOST:PORT"), "\(seed.standardError)")
        let peer = await CommandRun.spokes(["node", "--peer", "nowhere"])
        #expect(peer.status == 2)
        #expect(peer.standardError.contains("--peer must be host:port"), "\(peer.standardError)")
        let dashboard = await CommandRun.spokes(["node", "--dashboard", "on"])
        #expect(dashboard.status == 2)
        #expect(dashboard.standardError.contains("--dashboard must be off or a TCP port"), "\(dashboard.standardError)")
        let oldVariable = await CommandRun.spokes(["node"], environment: ["SPOKES_SEEDS": "127.0.0.1:7000"])
        #expect(oldVariable.status == 1 && oldVariable.standardError.contains("SPOKES_SEEDS was renamed to SPOKES_PEERS"), "\(oldVariable.standardError)")
    }
}
