import Foundation
import SpokesBikes
import SpokesCluster
import Testing
@testable import SpokesCLI

/// The `cluster.yaml` shipped at the repository root, against every setting the tool
/// knows: the cluster's own and those its workload declares (the bike limits).
@Suite struct ShippedSettingsTests {
    static let shippedFile = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("cluster.yaml").path

    init() {
        BikeLimits.declare()
    }

    @Test func theShippedFileLoadsToExactlyTheDefaults() throws {
        #expect(try ClusterSettings.load(file: Self.shippedFile, environment: [:]) == ClusterSettings())
    }

    /// Each setting line of cluster.yaml, in the table's order, is `key: default  # comment`
    /// with exactly the table's default and comment (doc line and range).
    @Test func theShippedFileShowsEverySettingOfTheTableWithItsDefaultAndComment() throws {
        let text = try String(contentsOfFile: Self.shippedFile, encoding: .utf8)
        var section: String?
        var found: [(path: String, value: String, comment: String)] = []
        for line in text.split(separator: "\n").map(String.init) where !line.hasPrefix("#") {
            let indented = line.hasPrefix("  ")
            let body = line.trimmingCharacters(in: .whitespaces)
            guard let colon = body.firstIndex(of: ":") else { continue }
            let key = String(body[..<colon])
            let rest = body[body.index(after: colon)...]
            if !indented { section = nil }
            if !indented, rest.isEmpty { section = key; continue }
            let parts = rest.components(separatedBy: " # ")
            found.append(((indented ? (section ?? "?") + "." : "") + key,
                          parts[0].trimmingCharacters(in: .whitespaces), parts.dropFirst().joined(separator: " # ")))
        }
        #expect(found.map(\.path) == ClusterSettings.table.map(\.path), "cluster.yaml lists the table's settings in its order")
        for (setting, line) in zip(ClusterSettings.table, found) where setting.path == line.path {
            #expect(line.value == setting.defaultText, "\(setting.path): cluster.yaml says \(line.value), the default is \(setting.defaultText)")
            #expect(line.comment == setting.comment, "\(setting.path): cluster.yaml's comment should be '\(setting.comment)'")
        }
        #expect(text.contains("defaults < this file"))
        #expect(text.contains("SECURITY.md"))
    }

    /// The bike limits are the bike module's settings, read through the same layers as
    /// the cluster's: a file, a variable, a value out of range named.
    @Test func theBikeLimitsAreDeclaredByTheBikeModuleAndReadLikeEveryOtherSetting() throws {
        #expect(ClusterSettings.clusterTable.allSatisfy { !$0.path.hasPrefix("limits.max_users") }, "not the cluster's own")
        #expect(BikeLimits.settings.map(\.environmentVariable) == ["SPOKES_LIMITS_MAX_USERS", "SPOKES_LIMITS_MAX_PATHS", "SPOKES_LIMITS_MAX_STATIONS"])
        var settings = ClusterSettings()
        #expect(BikeLimits.users.integer(in: settings) == 20_000)
        try settings.apply(environment: ["SPOKES_LIMITS_MAX_USERS": "5"])
        #expect(BikeLimits.users.integer(in: settings) == 5 && BikeLimits.paths.integer(in: settings) == 1_000)
        #expect(throws: ConfigurationError.self) { try settings.apply(environment: ["SPOKES_LIMITS_MAX_PATHS": "0"]) }
    }

    /// Sharded stations were removed (issue 28 §3: measured slower, BENCHMARKS.md): their
    /// settings are refused with the name, not silently ignored.
    @Test func theRemovedShardSettingsAreRefused() throws {
        BikeLimits.declare()
        var settings = ClusterSettings()
        #expect { try settings.apply(environment: ["SPOKES_BIKES_SHARDS": "3"]) } throws: {
            "\($0)" == "SPOKES_BIKES_SHARDS was removed: \(BikeLimits.removed["bikes.shards"]!); unset it"
        }
        let yaml = try YAMLParser.parse("bikes:\n  shard_pace_ms: 0\n", source: "cluster.yaml")
        #expect { try settings.apply(yaml: yaml, source: "cluster.yaml") } throws: {
            "\($0)".hasPrefix("cluster.yaml:2:3: 'bikes.shard_pace_ms' was removed: sharded stations were removed")
        }
    }
}
