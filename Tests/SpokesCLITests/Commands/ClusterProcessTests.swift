import SpokesConcurrency
import Foundation
import Testing
@testable import SpokesCLI
@testable import SpokesCluster

/// Real `spokes node` processes on loopback, each test on a discovery port and cluster
/// name of its own.
@Suite(.timeLimit(.minutes(2)))
struct ClusterProcessTests {
    let cluster = "proc-\(UUID().uuidString.prefix(8))"
    let discoveryPort = String(UInt16.random(in: 40_000...49_000))

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
        #expect(Set(members[0].keys).isSuperset(of: ["name", "address", "state", "slots", "running", "completed"]))
    }

    @Test func aClientOfAnotherClusterIsRefusedWithAClearMessage() async throws {
        let node = try await NodeProcess(name: "guarded", flags: flags)
        defer { node.kill(SIGTERM) }
        let run = await CommandRun.spokes(["status", "--to", node.address.description, "--cluster", "intruders"])
        #expect(run.status == 1)
        #expect(run.standardError.contains("refused: cluster 'intruders' is not '\(cluster)'"), "\(run.standardError)")
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
        let seed = await CommandRun.spokes(["node", "--seed", "nowhere"])
        #expect(seed.status == 2)
        #expect(seed.standardError.contains("--seed nowhere"))
        let dashboard = await CommandRun.spokes(["node", "--dashboard", "on"])
        #expect(dashboard.status == 2)
        #expect(dashboard.standardError.contains("--dashboard must be a TCP port"))
    }
}
