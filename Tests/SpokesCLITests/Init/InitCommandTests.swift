import Foundation
import SpokesCluster
import SpokesTestKit
import Synchronization
import Testing
@testable import SpokesCLI

/// `spokes init`: the two files a LAN cluster needs and the command every machine runs,
/// against a made-up machine's interfaces, in a temporary folder.
@Suite struct InitCommandTests {
    static let interfaces = [
        NetworkInterface(name: "lo", address: "127.0.0.1", netmask: "255.0.0.0", isLoopback: true, canBroadcast: false),
        NetworkInterface(name: "eth0", address: "198.51.100.20", netmask: "255.255.255.0"),
    ]

    /// Runs `spokes init` with `arguments` against ``interfaces``.
    func initialize(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        let output = Mutex(("", ""))
        let context = CommandContext(standardOutput: { text in output.withLock { $0.0 += text } },
                                     standardError: { text in output.withLock { $0.1 += text } }, standardErrorIsTerminal: false, environment: [:])
        guard case .run(let parsed) = try ArgumentParser.parse(arguments, as: InitCommand.spec, toolName: "spokes") else {
            throw UsageError("not a run")
        }
        let status = try InitCommand.run(parsed, context: context, interfaces: Self.interfaces)
        return output.withLock { (status, $0.0, $0.1) }
    }

    @Test func itWritesASettingsFileAndASecretOnlyItsOwnerReadsThatLoadAsANodeLoadsThem() throws {
        let folder = try TemporaryDirectory()
        let cluster = folder.file("lab")
        let run = try initialize(["--directory", cluster, "--cluster", "physics-lab", "--dashboard", "8787"])
        #expect(run.status == 0)
        let secretPath = (cluster as NSString).appendingPathComponent("secret")
        let attributes = try FileManager.default.attributesOfItem(atPath: secretPath)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let secret = try String(contentsOfFile: secretPath, encoding: .utf8)
        #expect(secret.count == 65 && secret.hasSuffix("\n"), "64 hex digits and a line feed")
        let text = secret.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!run.out.contains(text) && !run.err.contains(text), "the secret is never printed")

        let settings = try ClusterSettings.loadLayers(file: (cluster as NSString).appendingPathComponent("cluster.yaml"), environment: [:]).settings
        #expect(settings.cluster == "physics-lab")
        #expect(settings.host == "198.51.100.20" && settings.port == 7000)
        #expect(settings.discoveryMode == .lan && settings.broadcastAddress == "198.51.100.255")
        #expect(settings.secret?.fingerprint == (try ClusterSecret(text, source: "test")).fingerprint)
        #expect(settings.dashboardPort == 8787 && settings.dashboardHost == "198.51.100.20")
    }

    @Test func itPrintsTheOneCommandEveryMachineRuns() throws {
        let folder = try TemporaryDirectory()
        let run = try initialize(["--directory", folder.path])
        #expect(run.out.contains("\n  spokes node --config \(folder.path)/cluster.yaml --host lan --name \"$(hostname)\"\n"))
        #expect(run.out.contains("this machine is 198.51.100.20 (eth0), beacons go to 198.51.100.255"))
        #expect(run.out.contains("TCP and UDP 7000") && run.out.contains("UDP 7946"))
        let settings = try ClusterSettings.loadLayers(file: folder.file("cluster.yaml"), environment: [:]).settings
        #expect(settings.cluster.hasPrefix("lab-") && settings.cluster.count == 10)
        #expect(settings.dashboardPort == nil)
    }

    @Test func itNeverOverwritesACluster() throws {
        let folder = try TemporaryDirectory()
        _ = try initialize(["--directory", folder.path])
        let before = try String(contentsOfFile: folder.file("secret"), encoding: .utf8)
        #expect(throws: InitError.exists(folder.file("cluster.yaml"))) { try initialize(["--directory", folder.path]) }
        #expect(try String(contentsOfFile: folder.file("secret"), encoding: .utf8) == before)

        let other = try TemporaryDirectory()
        try other.write("mine\n", to: "secret")
        #expect(throws: InitError.exists(other.file("secret"))) { try initialize(["--directory", other.path]) }
        #expect(!FileManager.default.fileExists(atPath: other.file("cluster.yaml")), "nothing written")
    }

    @Test func aDirectoryThatIsAFileIsAnErrorNamingIt() throws {
        let folder = try TemporaryDirectory()
        let file = try folder.write("x", to: "plain")
        #expect(throws: InitError.notAFolder(file)) { try initialize(["--directory", file]) }
    }

    @Test func badFlagsAreUsageErrorsNamingTheFlag() throws {
        let folder = try TemporaryDirectory()
        #expect(throws: UsageError("--cluster must be 1 to 64 letters, digits, '.', '_' or '-', got 'a b'")) {
            try initialize(["--directory", folder.path, "--cluster", "a b"])
        }
        #expect(throws: UsageError.self) { try initialize(["--directory", folder.path, "--host", "203.0.113.1"]) }
        #expect(throws: UsageError.self) { try initialize(["--directory", folder.path, "--port", "0"]) }
        #expect(!FileManager.default.fileExists(atPath: folder.file("secret")))
    }

    @Test func theSettingsTextKeepsTheRepositorysLayout() {
        let plan = ClusterInit(cluster: "c1", lan: try! LANAddress.choose(among: Self.interfaces, host: nil, broadcast: nil), directory: "/etc/spokes")
        #expect(plan.settingsText.contains("\nnode:\n  host: 198.51.100.20         # the machine 'spokes init' ran on; the others: --host lan\n"))
        #expect(plan.nodeCommand == #"spokes node --config /etc/spokes/cluster.yaml --host lan --name "$(hostname)""#)
        var spaced = plan
        spaced.directory = "/srv/my lab"
        #expect(spaced.nodeCommand == #"spokes node --config '/srv/my lab/cluster.yaml' --host lan --name "$(hostname)""#)
    }

    @Test func hostLanBecomesThisMachinesAddressOnTheLANOfTheBroadcast() throws {
        let given: [(flag: String, path: String, values: [String])] = [("--host", "node.host", ["lan"]), ("--port", "node.port", ["7000"])]
        let resolved = try ClusterOptions.resolveLAN(given, broadcast: "198.51.100.255", interfaces: { Self.interfaces })
        #expect(resolved.map(\.values) == [["198.51.100.20"], ["7000"]])
        let untouched = try ClusterOptions.resolveLAN([("--host", "node.host", ["198.51.100.7"])], broadcast: "", interfaces: { Issue.record("read the interfaces"); return [] })
        #expect(untouched.map(\.values) == [["198.51.100.7"]])
        #expect(throws: UsageError.self) { try ClusterOptions.resolveLAN(given, broadcast: "", interfaces: { Self.interfaces }) }
        #expect(throws: UsageError.self) { try ClusterOptions.resolveLAN(given, broadcast: "192.0.2.255", interfaces: { Self.interfaces }) }
    }

    @Test func aNodeGivenHostLanByFlagListensOnThatAddress() throws {
        let folder = try TemporaryDirectory()
        _ = try initialize(["--directory", folder.path])
        guard case .run(let parsed) = try ArgumentParser.parse(["--config", folder.file("cluster.yaml"), "--host", "lan"], as: NodeCommand.spec, toolName: "spokes") else {
            Issue.record("not a run")
            return
        }
        let settings = try ClusterOptions.settings(parsed, environment: [:], interfaces: { Self.interfaces })
        #expect(settings.host == "198.51.100.20")
        #expect(settings.secret != nil)
    }
}
