import Foundation
import SpokesTestKit
import Testing
@testable import SpokesCluster

/// The `cluster.yaml` shipped at the repository root.
private let shippedFile = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("cluster.yaml").path

/// The shipped `cluster.yaml` without the settings a workload module declares (the bike
/// limits): the cluster's own part, which loads whatever else the test process declared.
/// (The whole file is checked in `ShippedSettingsTests`, where the bike module is linked.)
private func clusterPartOfShippedFile() throws -> String {
    let own = Set(ClusterSettings.clusterTable.map(\.key))
    // The bike workload's own settings (declared by `BikeLimits.declare()`, which this
    // suite must not count on: run alone, nothing has declared them).
    let workload = ["max_users", "max_paths", "max_stations"]
    return try String(contentsOfFile: shippedFile, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).filter { line in
        let key = line.trimmingCharacters(in: .whitespaces).split(separator: ":").first.map(String.init) ?? ""
        return !(workload.contains(key) && !own.contains(key))
    }.joined(separator: "\n")
}

/// Runs `body` with the path of a temporary `cluster.yaml` holding `text`; the file's
/// folder is removed afterwards.
private func withConfiguration<T>(_ text: String, _ body: (String) throws -> T) throws -> T {
    try withTemporaryDirectory { folder in
        let path = (folder as NSString).appendingPathComponent("cluster.yaml")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return try body(path)
    }
}

/// The error message of applying `yaml` (as `cluster.yaml`) to defaults, or nil if it succeeds.
private func failure(yaml: String) throws -> String? {
    var settings = ClusterSettings()
    let parsed = try YAMLParser.parse(yaml, source: "cluster.yaml")
    do {
        try settings.apply(yaml: parsed, source: "cluster.yaml")
        return nil
    } catch {
        return error.description
    }
}

/// The error message of applying `environment` to defaults, or nil if it succeeds.
private func failure(environment: [String: String]) -> String? {
    var settings = ClusterSettings()
    do {
        try settings.apply(environment: environment)
        return nil
    } catch {
        return error.description
    }
}

@Suite struct ClusterSettingsLoadingTests {
    /// Every numeric setting has a finite range; each edge is accepted, and values just
    /// outside it, huge ones, non-finite ones and negative ones are refused in every layer.
    @Test func everyNumericSettingHasAFiniteRangeEnforcedInEveryLayer() throws {
        for setting in ClusterSettings.table {
            guard let range = setting.range, let edges = Self.edges(of: range) else { continue }
            for accepted in [edges.low, edges.high] {
                var settings = ClusterSettings()
                // The range alone: relations between settings (interval < suspect_after) are another test's.
                try setting.assign(.scalar(accepted, Setting.noLocation), to: &settings, origin: .flag("--x"))
                #expect(setting.text(in: settings) == accepted || Double(setting.text(in: settings)) == Double(accepted), "\(setting.path) = \(accepted)")
            }
            for refused in ["1e21", "inf", "nan", "-1", "0x10", edges.below, edges.above] where refused != edges.low {
                var settings = ClusterSettings()
                #expect(throws: ConfigurationError.self, "\(setting.path) = \(refused) via a flag") {
                    try settings.apply(flag: "--x", values: [refused], to: setting.path)
                }
                #expect(failure(environment: [setting.environmentVariable: refused])?.hasPrefix(setting.environmentVariable + " must be") == true,
                        "\(setting.path) = \(refused) in the environment")
                let yaml = setting.section.map { "\($0):\n  \(setting.key): \(refused)" } ?? "\(setting.key): \(refused)"
                #expect(try failure(yaml: yaml)?.hasPrefix("cluster.yaml:\(setting.section == nil ? 1 : 2):") == true, "\(setting.path) = \(refused) in the file")
            }
        }
    }

    /// The lowest and highest value of a range text such as `1 to 10000` or
    /// `0.001 to 1000000 s`, and a value just outside each end.
    static func edges(of range: String) -> (low: String, high: String, below: String, above: String)? {
        let words = range.split(separator: " ")
        guard let to = words.firstIndex(of: "to"), to > 0, let low = Double(words[to - 1]), let high = Double(words[to + 1]) else { return nil }
        let isInteger = !range.hasSuffix(" s")
        let step = isInteger ? 1 : low / 2
        func text(_ value: Double) -> String { isInteger ? String(Int(value)) : String(value) }
        return (String(words[to - 1]), String(words[to + 1]), text(low - step), text(isInteger ? high + 1 : high * 2))
    }

    @Test func renamedKeysAndVariablesNameTheirNewName() throws {
        #expect(try failure(yaml: "seeds: [1.2.3.4:80]") == "cluster.yaml:1:1: 'seeds' was renamed to 'peers'; write peers: instead")
        #expect(failure(environment: ["SPOKES_SEEDS": "1.2.3.4:80"]) == "SPOKES_SEEDS was renamed to SPOKES_PEERS; set that instead")
    }

    @Test func aFlagSetsItsSettingAndItsErrorsNameTheFlag() throws {
        var settings = ClusterSettings()
        try settings.apply(flag: "--peer", values: ["1.2.3.4:80", "5.6.7.8:90"], to: "peers")
        try settings.apply(flag: "--slots", values: ["7"], to: "node.slots")
        #expect(settings.peers == ["1.2.3.4:80", "5.6.7.8:90"] && settings.slots == 7)
        #expect(throws: ConfigurationError.invalidValue(.flag("--slots"), setting: "node.slots", problem: "must be cores (one per core) or an integer from 1 to 10000, got '0'")) {
            try settings.apply(flag: "--slots", values: ["0"], to: "node.slots")
        }
        #expect(settings.slots == 7, "a refused flag changes nothing")
        do {
            try settings.apply(flag: "--peer", values: ["nowhere"], to: "peers")
        } catch {
            #expect(error.description == "--peer must be host:port with an IPv4 host and a port from 1 to 65535, e.g. 198.51.100.20:7000, got 'nowhere'")
        }
    }

    @Test func tildeIsTheHomeVariableAndThePasswordFileOnlyWithoutIt() {
        #expect(HomeDirectory.expand("~/.spokes", environment: ["HOME": "/tmp/elsewhere"]) == "/tmp/elsewhere/.spokes")
        #expect(HomeDirectory.expand("~", environment: ["HOME": "/tmp/elsewhere/"]) == "/tmp/elsewhere/")
        #expect(HomeDirectory.expand("~/a", environment: ["HOME": "/tmp/elsewhere/"]) == "/tmp/elsewhere/a")
        #expect(HomeDirectory.expand("/abs/~/x", environment: ["HOME": "/h"]) == "/abs/~/x")
        #expect(HomeDirectory.expand("rel/x", environment: ["HOME": "/h"]) == "rel/x")
        let fromPasswordFile = HomeDirectory.expand("~/x", environment: [:])
        #expect(fromPasswordFile.hasPrefix("/") && fromPasswordFile.hasSuffix("/x") && !fromPasswordFile.hasPrefix("~"))
        #expect(HomeDirectory.expand("~root/x", environment: ["HOME": "/h"]) == "/root/x")
        #expect(HomeDirectory.expand("~no-such-user-spokes/x", environment: ["HOME": "/h"]) == "~no-such-user-spokes/x")
    }

    @Test func theSecretFileFollowsHome() throws {
        try withTemporaryDirectory { home in
            try (ClusterSecret.generateText() + "\n").write(toFile: home + "/secret", atomically: true, encoding: .utf8)
            chmod(home + "/secret", 0o600)
            var settings = ClusterSettings()
            settings.secretFile = "~/secret"
            try settings.loadSecret(environment: ["HOME": home])
            #expect(settings.secret != nil)
        }
    }

    @Test func withoutFileOrEnvironmentTheDefaultsApply() throws {
        #expect(try ClusterSettings.load(file: nil, environment: ["HOME": "/root"]) == ClusterSettings())
    }

    @Test func theFileOverridesEveryDefault() throws {
        try withConfiguration("""
            cluster: bikes
            node:
              name: n1
              host: 0.0.0.0
              port: 7000
              slots: 8
            discovery:
              mode: lan
              port: 8000
              interval: 1.5
              broadcast: 198.51.100.255
            peers:
            - 198.51.100.20:7000
            - 198.51.100.1:1
            heartbeat: {interval: 1, suspect_after: 2, dead_after: 3}
            tasks:
              deadline: 60
              retries: 0
            jobs:
              keep: 5
            data_directory: /var/spokes
            dashboard: {port: 8787, host: 0.0.0.0}
            limits:
              max_frame_bytes: 1024
              call_timeout: 5
              handshake_timeout: 0.5
            """) { path throws in
        var expected = ClusterSettings()
        expected.cluster = "bikes"
        expected.nodeName = "n1"
        expected.host = "0.0.0.0"
        expected.port = 7000
        expected.slots = 8
        expected.discoveryMode = .lan
        expected.discoveryPort = 8000
        expected.discoveryInterval = 1.5
        expected.broadcastAddress = "198.51.100.255"
        expected.peers = ["198.51.100.20:7000", "198.51.100.1:1"]
        expected.heartbeatInterval = 1
        expected.suspectTimeout = 2
        expected.deadTimeout = 3
        expected.taskDeadline = 60
        expected.taskRetries = 0
        expected.jobsKeep = 5
        expected.dataDirectory = "/var/spokes"
        expected.dashboardPort = 8787
        expected.dashboardHost = "0.0.0.0"
        expected.maximumFrameSize = 1024
        expected.callTimeout = 5
        expected.handshakeTimeout = 0.5
        #expect(try ClusterSettings.load(file: path, environment: [:]) == expected)
        }
    }

    @Test func theEnvironmentOverridesTheFile() throws {
        let settings = try withConfiguration("cluster: from-file\nnode:\n  port: 7000\n  slots: 2\npeers: [1.1.1.1:1]") { path in
            try ClusterSettings.load(file: path, environment: [
                "SPOKES_NODE_PORT": "7100", "SPOKES_PEERS": " 2.2.2.2:2, 3.3.3.3:3 ,", "SPOKES_HEARTBEAT_DEAD_AFTER": "5",
            ])
        }
        #expect(settings.cluster == "from-file")
        #expect(settings.slots == 2)
        #expect(settings.port == 7100)
        #expect(settings.peers == ["2.2.2.2:2", "3.3.3.3:3"])
        #expect(settings.deadTimeout == 5)
    }

    @Test func everySettingHasAnEnvironmentVariable() throws {
        var environment: [String: String] = [:]
        for setting in ClusterSettings.clusterTable {
            environment[setting.environmentVariable] = "x"
        }
        #expect(environment.keys.sorted() == [
            "SPOKES_ACCEPT_SECRET_FILES", "SPOKES_CLUSTER", "SPOKES_DASHBOARD_HOST", "SPOKES_DASHBOARD_PORT", "SPOKES_DATA_DIRECTORY", "SPOKES_DISCOVERY_BROADCAST", "SPOKES_DISCOVERY_INTERVAL",
            "SPOKES_DISCOVERY_MODE", "SPOKES_DISCOVERY_PORT", "SPOKES_HEARTBEAT_DEAD_AFTER", "SPOKES_HEARTBEAT_INTERVAL",
            "SPOKES_HEARTBEAT_SUSPECT_AFTER", "SPOKES_JOBS_KEEP", "SPOKES_JOBS_MAX_PRIORITY", "SPOKES_JOBS_REPLACE_AFTER", "SPOKES_JOBS_REPLICAS", "SPOKES_LIMITS_CALL_TIMEOUT", "SPOKES_LIMITS_HANDSHAKE_TIMEOUT",
            "SPOKES_LIMITS_MAX_ARRAY_LENGTH", "SPOKES_LIMITS_MAX_CALLS_PER_CONNECTION", "SPOKES_LIMITS_MAX_CONNECTIONS",
            "SPOKES_LIMITS_MAX_CONNECTIONS_PER_ADDRESS", "SPOKES_LIMITS_MAX_FRAME_BYTES", "SPOKES_LIMITS_MAX_HANDSHAKING_CONNECTIONS", "SPOKES_LIMITS_MAX_JSON_DEPTH",
            "SPOKES_LIMITS_MAX_SEND_QUEUE_BYTES",
            "SPOKES_NODE_ADVERTISE", "SPOKES_NODE_HOST", "SPOKES_NODE_NAME", "SPOKES_NODE_PORT", "SPOKES_NODE_SLOTS", "SPOKES_NODE_WAITING_SLOTS", "SPOKES_PEERS",
            "SPOKES_SECRET_FILE", "SPOKES_TASKS_DEADLINE", "SPOKES_TASKS_RETRIES",
        ])
        #expect(!environment.keys.contains(ClusterSettings.secretVariable), "the secret itself is not a setting path")
        var settings = ClusterSettings()
        try settings.apply(environment: ["SPOKES_NODE_NAME": "", "SPOKES_CLUSTER": "c", "SPOKES_LIMITS_MAX_FRAME_BYTES": "2048"])
        #expect(settings.cluster == "c" && settings.nodeName == "" && settings.maximumFrameSize == 2048)
    }

    @Test func theDashboardIsOffUnlessAPortIsGiven() throws {
        #expect(ClusterSettings().dashboardPort == nil)
        #expect(ClusterSettings().dashboardHost == "127.0.0.1")
        #expect(try ClusterSettings.load(file: nil, environment: ["SPOKES_DASHBOARD_PORT": "0"]).dashboardPort == 0)
        #expect(try ClusterSettings.load(file: nil, environment: ["SPOKES_DASHBOARD_PORT": "off"]).dashboardPort == nil)
        let message = failure(environment: ["SPOKES_DASHBOARD_PORT": "on"])
        #expect(message?.contains("SPOKES_DASHBOARD_PORT") == true)
        #expect(message?.contains("must be off or a TCP port") == true)
        var settings = ClusterSettings()
        settings.dashboardPort = 9000
        try settings.validate()
    }

    @Test func laterLayersKeepWhatTheyDoNotSet() throws {
        var settings = ClusterSettings()
        try settings.apply(yaml: try YAMLParser.parse("node:\n  slots: 9\nheartbeat:", source: "f"), source: "f")
        try settings.apply(environment: ["SPOKES_NODE_NAME": "n"])
        var expected = ClusterSettings()
        expected.slots = 9
        expected.nodeName = "n"
        #expect(settings == expected)
    }

    @Test func aMissingFileIsNamed() {
        #expect(throws: ConfigurationError.missingFile("/nonexistent/cluster.yaml")) {
            try ClusterSettings.load(file: "/nonexistent/cluster.yaml", environment: [:])
        }
        #expect(ConfigurationError.missingFile("c.yaml").description == "configuration file not found: c.yaml")
    }

    @Test func aDirectoryIsAnUnreadableFile() {
        let directory = FileManager.default.temporaryDirectory.path
        #expect(throws: ConfigurationError.unreadableFile(directory, reason: "it is a directory")) {
            try ClusterSettings.load(file: directory, environment: [:])
        }
    }

    @Test func yamlErrorsKeepTheFileNameAndPosition() throws {
        try withConfiguration("node:\n  port: 1\n  port: 2\n") { path in
            do {
                _ = try ClusterSettings.load(file: path, environment: [:])
                Issue.record("loaded a file with a duplicate key")
            } catch {
                guard case ConfigurationError.yaml = error else { Issue.record("not a YAML error: \(error)"); return }
                #expect("\(error)" == "\(path):3:3: duplicate key 'port' (first at line 2)")
            }
        }
    }

    @Test(arguments: [
        ("node:\n  name: a\n  prot: 1", "cluster.yaml:3:3: unknown key 'prot' in 'node'. Did you mean 'port'?"),
        ("clustr: x", "cluster.yaml:1:1: unknown key 'clustr' at the top level. Did you mean 'cluster'?"),
        ("heartbeat:\n  suspect: 1", "cluster.yaml:2:3: unknown key 'suspect' in 'heartbeat'. Did you mean 'suspect_after'?"),
        ("limits:\n  max_frame: 1", "cluster.yaml:2:3: unknown key 'max_frame' in 'limits'. Did you mean 'max_frame_bytes'?"),
        ("node:\n  color: red", "cluster.yaml:2:3: unknown key 'color' in 'node'. Known keys: name, host, port, advertise, slots, waiting_slots."),
        ("secret: s", "cluster.yaml:1:1: secret cannot be written in cluster.yaml: put the secret in a file only you can read and name it with secret_file, or set SPOKES_SECRET"),
    ])
    func unknownKeysAreNamedWithTheNearestKnownKey(yaml: String, message: String) throws {
        #expect(try failure(yaml: yaml) == message)
    }

    /// The cluster's own top-level keys, in the table's order; a workload's own (the bike
    /// module's `bikes`, declared once by whichever test or program starts first) follow.
    @Test func anUnknownTopLevelKeyListsTheKnownOnes() throws {
        let message = try failure(yaml: "colour: red")
        let cluster = "cluster.yaml:1:1: unknown key 'colour' at the top level. Known keys: cluster, node, discovery, peers, heartbeat, tasks, jobs, data_directory, secret_file, accept_secret_files, dashboard, limits"
        #expect(message == cluster + "." || message == cluster + ", bikes.", "\(message)")
    }

    @Test(arguments: [
        ("cluster: spokes\nnode:\n  name: a\n  host: 127.0.0.1\n  slots: many", "cluster.yaml:5:10: node.slots must be cores (one per core) or an integer from 1 to 10000, got 'many'"),
        ("node:\n  slots: 0", "cluster.yaml:2:10: node.slots must be cores (one per core) or an integer from 1 to 10000, got '0'"),
        ("node:\n  port: 65536", "cluster.yaml:2:9: node.port must be an integer from 0 to 65535, got '65536'"),
        ("node:\n  port:", "cluster.yaml:2:8: node.port must be an integer from 0 to 65535, got nothing"),
        ("node:\n  host: localhost", "cluster.yaml:2:9: node.host must be an IPv4 address like 127.0.0.1, got 'localhost'"),
        ("node:\n  host: 1.2.3.256", "cluster.yaml:2:9: node.host must be an IPv4 address like 127.0.0.1, got '1.2.3.256'"),
        ("node: 5", "cluster.yaml:1:7: node must be a mapping with keys name, host, port, advertise, slots, waiting_slots, got '5'"),
        ("cluster: ''", "cluster.yaml:1:10: cluster must be a non-empty name, got ''"),
        ("cluster: [a]", "cluster.yaml:1:10: cluster must be a single value, got a list"),
        ("discovery:\n  mode: wan", "cluster.yaml:2:9: discovery.mode must be one of loopback, lan, off, got 'wan'"),
        ("discovery:\n  port: 0", "cluster.yaml:2:9: discovery.port must be an integer from 1 to 65535, got '0'"),
        ("discovery:\n  interval: 0", "cluster.yaml:2:13: discovery.interval must be a number of seconds from 0.01 to 3600, got '0'"),
        ("limits:\n  call_timeout: inf", "cluster.yaml:2:17: limits.call_timeout must be a number of seconds from 0.001 to 1000000, got 'inf'"),
        ("limits:\n  handshake_timeout: nan", "cluster.yaml:2:22: limits.handshake_timeout must be a number of seconds from 0.001 to 3600, got 'nan'"),
        ("limits:\n  max_frame_bytes: 10", "cluster.yaml:2:20: limits.max_frame_bytes must be an integer from 1024 to 1073741824, got '10'"),
        ("tasks:\n  retries: -1", "cluster.yaml:2:12: tasks.retries must be an integer from 0 to 100, got '-1'"),
        ("tasks:\n  deadline: -5", "cluster.yaml:2:13: tasks.deadline must be a number of seconds from 0.001 to 1000000, got '-5'"),
        ("tasks:\n  deadline: 1e21", "cluster.yaml:2:13: tasks.deadline must be a number of seconds from 0.001 to 1000000, got '1e21'"),
        ("jobs: {keep: 0}", "cluster.yaml:1:14: jobs.keep must be an integer from 1 to 1000000, got '0'"),
        ("data_directory:", "cluster.yaml:1:16: data_directory must be a directory path, got nothing"),
        ("peers: [1.2.3.4:80, host:80]", "cluster.yaml:1:21: peers[1] must be host:port with an IPv4 host and a port from 1 to 65535, e.g. 198.51.100.20:7000, got 'host:80'"),
        ("peers:\n- 1.2.3.4", "cluster.yaml:2:3: peers[0] must be host:port with an IPv4 host and a port from 1 to 65535, e.g. 198.51.100.20:7000, got '1.2.3.4'"),
        ("peers: 1.2.3.4:80", "cluster.yaml:1:8: peers must be a list of host:port, e.g. [198.51.100.20:7000], got '1.2.3.4:80'"),
        ("- a", "cluster.yaml:1:1: the document must be a mapping of settings like 'cluster: spokes', got a list"),
    ])
    func wrongValuesInTheFileAreRejectedWithTheirLocation(yaml: String, message: String) throws {
        #expect(try failure(yaml: yaml) == message)
    }

    @Test(arguments: [
        ("heartbeat:\n  suspect_after: 2", "cluster.yaml:2:18: heartbeat.suspect_after must be less than heartbeat.dead_after (1.6), got '2.0'"),
        ("heartbeat:\n  dead_after: 0.5", "cluster.yaml:2:15: heartbeat.dead_after must be greater than heartbeat.suspect_after (0.6), got '0.5'"),
        ("heartbeat:\n  interval: 0.6", "cluster.yaml:2:13: heartbeat.interval must be less than heartbeat.suspect_after (0.6), got '0.6'"),
        ("discovery:\n  mode: lan", "cluster.yaml:2:9: discovery.mode 'lan' needs discovery.broadcast set to the LAN's broadcast address, e.g. 198.51.100.255"),
        ("node:\n  slots: 4\nlimits:\n  max_calls_per_connection: 2000",
         "cluster.yaml:4:29: limits.max_calls_per_connection must be at least 2205: node.slots (4) and node.waiting_slots (2000) with their queues, 2205 places a coordinator may fill over one connection, got '2000'"),
        ("node:\n  slots: 4\n  waiting_slots: 5000",
         "cluster.yaml:3:18: node.waiting_slots needs limits.max_calls_per_connection (4096) at least 5505: node.slots (4) and node.waiting_slots (5000) with their queues, 5505 places a coordinator may fill over one connection; raise that limit too"),
        ("node:\n  slots: 3000",
         "cluster.yaml:2:10: node.slots needs limits.max_calls_per_connection (4096) at least 5500: node.slots (3000) and node.waiting_slots (2000) with their queues, 5500 places a coordinator may fill over one connection; raise that limit too"),
    ])
    func inconsistentSettingsBlameTheValueThisLayerSet(yaml: String, message: String) throws {
        #expect(try failure(yaml: yaml) == message)
    }

    @Test func consistentChangesInOneLayerAreAccepted() throws {
        #expect(try failure(yaml: "heartbeat:\n  interval: 2\n  suspect_after: 5\n  dead_after: 9\ndiscovery:\n  mode: lan\n  broadcast: 198.51.100.255") == nil)
        #expect(try failure(yaml: "node:\n  slots: 4\n  waiting_slots: 50000\nlimits:\n  max_calls_per_connection: 55005") == nil)
    }

    @Test(arguments: [
        (["SPOKES_NODE_SLOTS": "many"], "SPOKES_NODE_SLOTS must be cores (one per core) or an integer from 1 to 10000, got 'many'"),
        (["SPOKES_NODE_PORT": ""], "SPOKES_NODE_PORT must be an integer from 0 to 65535, got ''"),
        (["SPOKES_DISCOVERY_MODE": "LAN"], "SPOKES_DISCOVERY_MODE must be one of loopback, lan, off, got 'LAN'"),
        (["SPOKES_PEERS": "1.2.3.4:80,nope"], "SPOKES_PEERS must be host:port with an IPv4 host and a port from 1 to 65535, e.g. 198.51.100.20:7000, got 'nope'"),
        (["SPOKES_HEARTBEAT_DEAD_AFTER": "0.5"], "SPOKES_HEARTBEAT_DEAD_AFTER must be greater than heartbeat.suspect_after (0.6), got '0.5'"),
        (["SPOKES_DISCOVERY_MODE": "lan"], "SPOKES_DISCOVERY_MODE 'lan' needs discovery.broadcast set to the LAN's broadcast address, e.g. 198.51.100.255"),
    ])
    func wrongValuesInTheEnvironmentNameTheVariable(environment: [String: String], message: String) {
        #expect(failure(environment: environment) == message)
    }

    @Test(arguments: [
        ("SPOKES_NODE_PROT", "SPOKES_NODE_PORT"),
        ("SPOKES_PEER", "SPOKES_PEERS"),
        ("SPOKES_HEARTBEAT_DEADAFTER", "SPOKES_HEARTBEAT_DEAD_AFTER"),
        ("SPOKES_node_port", "SPOKES_NODE_PORT"),
    ])
    func misspelledVariablesAreRejectedWithASuggestion(name: String, suggestion: String) {
        #expect(failure(environment: [name: "1"]) == "unknown environment variable \(name). Did you mean \(suggestion)?")
    }

    @Test func unrelatedAndReservedVariablesAreIgnored() throws {
        var settings = ClusterSettings()
        try settings.apply(environment: ["SPOKES_SECRET": "s3cret", "SPOKES_LOG_LEVEL": "debug", "PATH": "/bin", "NODE_PORT": "x"])
        #expect(settings == ClusterSettings())
    }

    @Test func aRejectedLayerLeavesTheSettingsUnchanged() throws {
        var settings = ClusterSettings()
        #expect(throws: ConfigurationError.self) {
            try settings.apply(yaml: try YAMLParser.parse("cluster: changed\nnode:\n  slots: 0", source: "f"), source: "f")
        }
        #expect(throws: ConfigurationError.self) {
            try settings.apply(environment: ["SPOKES_CLUSTER": "changed", "SPOKES_NODE_PORT": "x"])
        }
        #expect(settings == ClusterSettings())
    }

    @Test func validateChecksSettingsChangedInCode() {
        #expect(throws: Never.self) { try ClusterSettings().validate() }
        var settings = ClusterSettings()
        settings.slots = 0
        #expect(throws: ConfigurationError.invalidValue(.settings, setting: "node.slots", problem: "must be cores (one per core) or an integer from 1 to 10000, got '0'")) {
            try settings.validate()
        }
        settings = ClusterSettings()
        settings.heartbeatInterval = 1
        #expect(throws: ConfigurationError.invalidValue(.settings, setting: "heartbeat.interval", problem: "must be less than heartbeat.suspect_after (0.6), got '1.0'")) {
            try settings.validate()
        }
    }

    /// 1,000 seeded mutations of the shipped cluster.yaml through the whole loader: each
    /// loads, or fails with a message that names the file and a line:column inside it.
    /// Each round yields, so the loop never holds a cooperative-pool thread for seconds.
    @Test func mutatedConfigurationFilesLoadOrFailWithALocation() async throws {
        let original = Array(try clusterPartOfShippedFile().utf8)
        let alphabet = Array(" \t\n-:#'\"[]{},.0123456789abcxyz_".utf8) + [0xFF, 0x00]
        var generator = TestGenerator(seed: 66)
        var loaded = 0
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        for _ in 0..<1_000 {
            await Task.yield()
            var bytes = original
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let position = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes.insert(alphabet.randomElement(using: &generator)!, at: position)
                case 1: bytes.remove(at: position)
                default: bytes[position] = alphabet.randomElement(using: &generator)!
                }
            }
            let path = folder.file("cluster.yaml")
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            do {
                _ = try ClusterSettings.load(file: path, environment: [:])
                loaded += 1
            } catch {
                let message = error.description
                let located = message.hasPrefix(path + ":") && message.dropFirst(path.count + 1).prefix { $0 != " " }.contains(":")
                #expect(located || message.contains("not UTF-8") || message.hasPrefix("cannot read the secret file"), "\(message)")
            }
        }
        #expect(loaded > 0 && loaded < 1_000)
    }
}

@Suite struct SlotBudgetSettingsTests {
    @Test func cpuSlotsDefaultToTheCoresThisProcessMayRunOn() throws {
        let settings = ClusterSettings()
        #expect(settings.cpuSlots == .cores && settings.slots == ClusterSettings.coreCount)
        #expect(ClusterSettings.coreCount >= 1)
        #expect(ClusterSettings.setting("node.slots")?.defaultText == "cores")
        var fixed = ClusterSettings()
        try fixed.apply(flag: "--slots", values: ["3"], to: "node.slots")
        #expect(fixed.cpuSlots == .fixed(3) && fixed.slots == 3)
        try fixed.apply(environment: ["SPOKES_NODE_SLOTS": "cores"])
        #expect(fixed.cpuSlots == .cores)
    }

    @Test func waitingSlotsAreAThousandsBudgetOfTheirOwn() throws {
        let settings = ClusterSettings()
        #expect(settings.waitingSlots == ClusterSettings.defaultWaitingSlots && settings.waitingSlots >= 1_000)
        var changed = ClusterSettings()
        try changed.apply(environment: ["SPOKES_NODE_WAITING_SLOTS": "300"])
        #expect(changed.waitingSlots == 300 && changed.slots == settings.slots)
    }
}
