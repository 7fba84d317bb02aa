import Foundation
import SpokesTestKit
import Testing
@testable import SpokesCLI
import SpokesCluster

/// Real `spokes node` processes sharing a secret through `SPOKES_SECRET`: a node with
/// another secret never gets in, and a submit without the secret runs nothing.
@Suite(.processLane, .timeLimit(.minutes(3)))
struct SecureClusterProcessTests {
    let cluster = "secure-\(UUID().uuidString.prefix(8))"
    let discoveryPort = String(TestPorts.discovery())
    let secret = ["SPOKES_SECRET": "process-test-secret-\(UUID().uuidString)"]
    let wrongSecret = ["SPOKES_SECRET": "some-other-secret-\(UUID().uuidString)"]
    /// This test's files, removed when the test ends.
    let files: TemporaryDirectory
    let smallNetwork: String

    init() throws {
        files = try TemporaryDirectory()
        smallNetwork = try TestFiles.smallNetwork(in: files)
    }

    func flags(_ extra: [String] = []) -> [String] { ["--cluster", cluster, "--discovery-port", discoveryPort] + extra }

    func status(of node: NodeProcess, environment: [String: String]) async -> CommandRun {
        await CommandRun.spokes(["status", "--to", node.address.description, "--json"] + flags(), environment: environment)
    }

    /// Polls `node`'s `status --json` with the right secret until `condition` holds (at most 15 s).
    func waitForStatus(of node: NodeProcess, _ condition: ([String: Any]) -> Bool) async throws -> [String: Any] {
        var last: [String: Any] = [:]
        let deadline = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < deadline {
            last = (try? await status(of: node, environment: secret).json()) ?? [:]
            if condition(last) { return last }
            try await Task.sleep(for: .milliseconds(50))
        }
        return last
    }

    static func aliveNames(_ status: [String: Any]) -> Set<String> {
        Set((status["members"] as? [[String: Any]] ?? []).filter { $0["state"] as? String == "alive" }.compactMap { $0["name"] as? String })
    }

    static func rejected(_ status: [String: Any], _ kind: Rejection) -> Int {
        (status["rejected"] as? [String: Int])?[kind.rawValue] ?? 0
    }

    @Test func aNodeWithAnotherSecretIsNeverAdmittedAndAWrongSubmitRunsNothing() async throws {
        let nodes = try await NodeProcess.start(3) { try await NodeProcess(name: "s\($0)", flags: flags(), environment: secret) }
        defer { nodes.forEach { $0.kill(SIGTERM) } }
        let three = try await waitForStatus(of: nodes[0]) { Self.aliveNames($0) == ["s0", "s1", "s2"] }
        #expect(Self.aliveNames(three) == ["s0", "s1", "s2"])

        // The intruder hears the cluster's beacons and dials s0 directly, with the wrong secret.
        let intruder = try await NodeProcess(name: "intruder", flags: flags(["--peer", nodes[0].address.description]), environment: wrongSecret)
        defer { intruder.kill(SIGTERM) }
        let tried = try await waitForStatus(of: nodes[0]) {
            Self.rejected($0, .authenticationFailed) > 0 && Self.rejected($0, .unauthenticatedBeacon) > 0
        }
        #expect(Self.rejected(tried, .authenticationFailed) > 0, "the intruder's dial was seen and turned away")
        #expect(Self.rejected(tried, .unauthenticatedBeacon) > 0, "the intruder's beacons were turned away")
        for node in nodes {
            let seen = try await waitForStatus(of: node) { !Self.aliveNames($0).isEmpty }
            #expect(Self.aliveNames(seen) == ["s0", "s1", "s2"], "\(node.name) sees only the three")
            #expect((seen["members"] as? [[String: Any]] ?? []).count == 3)
        }

        // Clients: without the secret, or with the wrong one, nothing is shown or run.
        let unauthenticated = await status(of: nodes[0], environment: ["SPOKES_SECRET": ""])
        #expect(unauthenticated.status == 1)
        #expect(unauthenticated.standardError.contains(
            "the node at \(nodes[0].address) refused this client: cluster '\(cluster)' (node s0) requires its secret (SPOKES_SECRET or secret_file) and this client has none"),
            "\(unauthenticated.standardError)")
        let otherSecret = await status(of: nodes[0], environment: wrongSecret)
        #expect(otherSecret.status == 1)
        #expect(otherSecret.standardError.contains("the node at \(nodes[0].address) holds another cluster secret than this client"), "\(otherSecret.standardError)")
        let stop = await CommandRun.spokes(["stop", "--to", nodes[2].address.description] + flags(), environment: ["SPOKES_SECRET": ""])
        #expect(stop.status == 1 && stop.standardError.contains("refused this client"), "a client without the secret cannot stop a node: \(stop.standardError)")
        let workload = ["--network", smallNetwork, "--users", "10", "--paths", "2", "--time-scale", "0", "--json"]
        let wrong = await CommandRun.spokes(["submit", "--to", nodes[1].address.description] + workload + flags(), environment: wrongSecret)
        #expect(wrong.status == 1)
        #expect(wrong.standardError.contains("secret"), "\(wrong.standardError)")
        #expect(!wrong.standardError.contains(wrongSecret["SPOKES_SECRET"]!) && !wrong.standardError.contains(secret["SPOKES_SECRET"]!))
        #expect(wrong.standardOutput.isEmpty)
        for node in nodes {
            let members = try await waitForStatus(of: node) { !Self.aliveNames($0).isEmpty }["members"] as? [[String: Any]] ?? []
            #expect(members.first?["completed"] as? Int == 0, "\(node.name) ran nothing")
        }

        // With the secret, the same submit runs.
        let right = await CommandRun.spokes(["submit", "--to", nodes[1].address.description] + workload + flags(), environment: secret)
        #expect(right.status == 0, "\(right.standardError)")
        #expect((try? right.json())?["completedUsers"] as? Int == 10)
    }

    /// A client that finds nodes by discovery tells silence from nodes it cannot talk to:
    /// another secret, no secret, or another cluster.
    @Test func aClientSaysWhyTheNodesItHearsAreNotForIt() async throws {
        let node = try await NodeProcess(name: "heard", flags: flags(), environment: secret)
        defer { node.kill(SIGTERM) }
        async let wrong = CommandRun.spokes(["status", "--timeout", "2"] + flags(), environment: wrongSecret)
        async let none = CommandRun.spokes(["status", "--timeout", "2"] + flags(), environment: ["SPOKES_SECRET": ""])
        async let otherCluster = CommandRun.spokes(["status", "--timeout", "2", "--cluster", "elsewhere", "--discovery-port", discoveryPort], environment: secret)
        let (withWrong, withNone, withOther) = await (wrong, none, otherCluster)
        // Sealed beacons show their cluster; their nodes, only by the address they came from.
        let heard = "nodes of cluster '\(cluster)' were heard on discovery port \(discoveryPort) (a node at 127.0.0.1)"
        #expect(withWrong.status == 1 && withWrong.standardError.contains("\(heard), but they hold another secret than this client"), "\(withWrong.standardError)")
        #expect(withNone.status == 1 && withNone.standardError.contains("\(heard), but they hold a cluster secret and this client has none"), "\(withNone.standardError)")
        #expect(withOther.status == 1 && withOther.standardError.contains("no node of cluster 'elsewhere' was heard") &&
                withOther.standardError.contains("only nodes of cluster '\(cluster)' (a node at 127.0.0.1); give --cluster \(cluster)"), "\(withOther.standardError)")
        let right = await CommandRun.spokes(["status", "--to", node.address.description, "--json"], environment: secret)
        #expect(right.status == 0, "with the secret and --to, no --cluster is needed: \(right.standardError)")
    }

    @Test func aJobOverTheNodesLimitsIsRefusedWithTheSettingToChange() async throws {
        let node = try await NodeProcess(name: "limited", flags: flags(), environment: secret.merging(["SPOKES_LIMITS_MAX_USERS": "5"]) { $1 })
        defer { node.kill(SIGTERM) }
        let run = await CommandRun.spokes(
            ["submit", "--to", node.address.description, "--network", smallNetwork, "--users", "6", "--paths", "1", "--time-scale", "0"] + flags(),
            environment: secret)
        #expect(run.status == 1)
        #expect(run.standardError.contains("6 users") && run.standardError.contains("limits.max_users"), "\(run.standardError)")
        let status = try await waitForStatus(of: node) { Self.rejected($0, .jobTooLarge) > 0 }
        #expect(Self.rejected(status, .jobTooLarge) == 1)
    }

    @Test func aNodeWithoutASecretRefusesToListenBeyondLoopbackUnlessInsecure() async {
        // Checked before binding: nothing listens on the documentation address.
        let run = await CommandRun.spokes(["node", "--host", "198.51.100.7"] + flags(), environment: ["SPOKES_SECRET": ""])
        #expect(run.status == 1)
        #expect(run.standardError.contains("refusing to listen on 198.51.100.7 without a cluster secret"), "\(run.standardError)")
        #expect(run.standardError.contains("--insecure"))
    }

    @Test func aShortSecretIsRefusedWithoutBeingShown() async {
        let run = await CommandRun.spokes(["status", "--to", "127.0.0.1:1"] + flags(), environment: ["SPOKES_SECRET": "tiny-secret"])
        #expect(run.status == 1)
        #expect(run.standardError.contains("11 bytes") && !run.standardError.contains("tiny-secret"), "\(run.standardError)")
    }
}
