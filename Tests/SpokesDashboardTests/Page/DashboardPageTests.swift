import Foundation
import SpokesCluster
import Testing
@testable import SpokesDashboard

/// The page's script and stylesheet files, found from this source file's place in the repository.
private let assetsFolder = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Sources/SpokesDashboard/Page/Assets")

@Suite struct DashboardPageTests {
    /// Every key of `value` encoded as JSON, at any depth; the keys of dictionaries named in
    /// `dictionaries` (such as `perNode`, keyed by node name) are data, not schema.
    func keys(of value: some Encodable, dictionaries: Set<String> = ["perNode"]) throws -> Set<String> {
        var found: Set<String> = []
        func walk(_ json: Any, isDictionary: Bool) {
            if let object = json as? [String: Any] {
                for (key, child) in object {
                    if !isDictionary { found.insert(key) }
                    walk(child, isDictionary: !isDictionary && dictionaries.contains(key))
                }
            } else if let array = json as? [Any] {
                array.forEach { walk($0, isDictionary: false) }
            }
        }
        walk(try JSONSerialization.jsonObject(with: JSONEncoder().encode(value)), isDictionary: false)
        return found
    }

    /// True when the script reads `.key` (not merely a longer name starting with it).
    func scriptReads(_ key: String) -> Bool {
        let script = DashboardPage.javascript
        var searchFrom = script.startIndex
        while let range = script.range(of: "." + key, range: searchFrom..<script.endIndex) {
            let next = script[range.upperBound...].first
            if next.map({ !($0.isLetter || $0.isNumber || $0 == "_") }) ?? true { return true }
            searchFrom = range.upperBound
        }
        return false
    }

    /// A snapshot with every optional set, so every key is encoded.
    static let fullSnapshot = DashboardSnapshot(
        node: "a", cluster: "c", time: 12.5,
        members: [MemberView(
            name: "a", address: "127.0.0.1:1", state: "alive", isServing: true, slots: 4, waitingSlots: 100, inUse: TaskBudgets(cpu: 1, waiting: 2),
            completed: 2, failed: 0,
            roundTripMilliseconds: 0.25, uptime: 30)],
        jobs: [JobView(
            id: "job-1", kind: "bikes.user", title: "t", coordinator: "a", state: "running", total: 10, done: 3, failed: 0,
            retries: 1, elapsed: 2, rate: 1.5, estimatedRemaining: 4.7, perNode: ["a": .init(done: 3, running: 1)], stationBikes: [1, 2])],
        tasks: [TaskSpanView(node: "a", slot: 0, job: "job-1", task: 3, attempt: 1, start: 11, end: 12, outcome: "succeeded")],
        groups: [ReplicaGroupView(id: "bikejob-job-1", node: "a", replicas: ["a", "b", "c"], leader: "a", term: 3, role: "leader", commitIndex: 40)],
        failovers: [FailoverView(time: 12, group: "bikejob-job-1", job: "job-1", from: "b", to: "a", term: 3)])

    @Test func htmlLoadsExactlyTheStylesheetAndTheScript() {
        let html = DashboardPage.html
        #expect(html.contains("<link rel=\"stylesheet\" href=\"/static/dashboard.css\">"))
        #expect(html.contains("<script src=\"/static/dashboard.js\" defer></script>"))
        #expect(html.components(separatedBy: "<script").count == 2)
        #expect(html.components(separatedBy: "<link rel=\"stylesheet\"").count == 2)
    }

    @Test func htmlHasNoInlineScriptOrStyle() throws {
        let html = DashboardPage.html.lowercased()
        #expect(!html.contains("<style"))
        #expect(!html.contains(" style="))
        #expect(!html.contains("javascript:"))
        #expect(html.firstMatch(of: try Regex(#"\son[a-z]+\s*="#)) == nil)
        let scripts = html.matches(of: try Regex(#"<script[^>]*>([\s\S]*?)</script>"#))
        #expect(scripts.count == 1)
        #expect(scripts.allSatisfy { ($0.output[1].substring ?? "").isEmpty })
    }

    @Test func htmlHasTheHooksBrowserTestsUse() {
        let html = DashboardPage.html
        #expect(html.contains("id=\"task-stream\""))
        #expect(html.contains("id=\"station-map\""))
        #expect(html.contains("<div id=\"connection\" data-state=\"reconnecting\""))
    }

    @Test func nothingIsFetchedFromOutside() {
        for text in [DashboardPage.html, DashboardPage.css, DashboardPage.javascript] {
            for scheme in ["http://", "https://"] {
                let addresses = text.components(separatedBy: scheme).dropFirst()
                #expect(addresses.allSatisfy { $0.hasPrefix("www.w3.org/2000/svg") }, "\(addresses.first?.prefix(40) ?? "")")
            }
        }
        #expect(!DashboardPage.css.contains("@import"))
        #expect(!DashboardPage.css.contains("@font-face"))
        #expect(!DashboardPage.css.contains("url("))
    }

    @Test func scriptReadsEverySnapshotKey() throws {
        let snapshotKeys = try keys(of: Self.fullSnapshot)
        #expect(snapshotKeys.isSuperset(of: ["roundTripMilliseconds", "estimatedRemaining", "stationBikes", "outcome", "perNode", "replicas",
                                             "leader", "commitIndex", "role", "from", "to", "term"]))
        #expect(!snapshotKeys.contains("a"), "node names in perNode are data, not keys")
        for key in snapshotKeys.sorted() {
            #expect(scriptReads(key), "the script does not read .\(key)")
        }
    }

    @Test func scriptReadsTheStationKeysTheMapNeeds() throws {
        let view = StationsView(job: "job-1", network: "BikeMi", stations: [
            .init(id: "s", name: "Duomo", latitude: 45.46, longitude: 9.19, capacity: 30, bikesAtStart: 2),
        ])
        // Stations come in the order of the job's stationBikes: the map has no use for their ids.
        for key in try keys(of: view).subtracting(["id"]).sorted() {
            #expect(scriptReads(key), "the script does not read .\(key)")
        }
    }

    @Test func scriptUsesTheAPIAndTheHooks() {
        let script = DashboardPage.javascript
        for needle in [
            "fetchJSON('/api/snapshot')", "new EventSource('/api/events')", "addEventListener('snapshot'",
            "'/api/jobs/' + encodeURIComponent(id) + '/stations'", "'/jobs/' + encodeURIComponent(job.id) + '/report.html'",
            "setAttribute('data-member'", "'data-state'", "setAttribute('data-job'", "$('task-stream')", "$('station-map')",
            "class: 'station'", "$('connection')", "'live'", "'reconnecting'", "'polling'", "response.status === 401",
        ] {
            #expect(script.contains(needle), "\(needle)")
        }
    }

    @Test func scriptShowsEachRunningJobsLeaderAndReplicasAndTheFailovers() {
        let script = DashboardPage.javascript
        for needle in [
            // A running job's card: its group, found by job id; "leader n2 · replicas n1 n2 n3", the leader marked.
            "new Map(snapshot.groups.filter((g) => g.job).map((g) => [g.job, g]))",
            "renderReplicas(entry, job.state === 'running' ? groups.get(job.id) : null, alive)",
            "'leader ' + group.leader", "'replicas'", "for (const name of replicas)",
            "'replica' + (name === group.leader ? ' leader' : '') + (alive.has(name) ? '' : ' down')", "setAttribute('data-replica', name)",
            "new Set(snapshot.members.filter((m) => m.state === 'alive').map((m) => m.name))",
            // Failovers: listed under the stream (worded as FailoverView.description, with an arrow), and marked on it.
            "$('failovers')", "setAttribute('data-group', event.group)",
            "'job ' + event.job : 'group ' + event.group) + ': leader ' + event.from + ' \\u2192 ' + event.to + ' (term ' + event.term + ')'",
            "class: 'failover-mark'", "(right - (base - event.time) * px)",
        ] {
            #expect(script.contains(needle), "\(needle)")
        }
        #expect(DashboardPage.html.contains("<ul id=\"failovers\""))
        for selector in [".job-replicas", ".replica.leader", ".replica.down", ".failover-mark", ".failovers"] {
            #expect(DashboardPage.css.contains(selector + " {"), "\(selector)")
        }
    }

    @Test func scriptNeverTurnsDataIntoMarkup() {
        let script = DashboardPage.javascript
        for forbidden in ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"] {
            #expect(!script.contains(forbidden), "\(forbidden)")
        }
    }

    @Test func embeddedScriptIsTheAssetFileVerbatim() throws {
        let file = try String(contentsOf: assetsFolder.appendingPathComponent("dashboard.js"), encoding: .utf8)
        // A multi-line literal drops the file's final newline.
        #expect(DashboardPage.scriptAsset + "\n" == file, "run Scripts/embed-resources after changing Page/Assets")
    }

    @Test func embeddedStyleIsTheAssetFileVerbatim() throws {
        let file = try String(contentsOf: assetsFolder.appendingPathComponent("dashboard.css"), encoding: .utf8)
        #expect(DashboardPage.styleAsset + "\n" == file, "run Scripts/embed-resources after changing Page/Assets")
    }

    @Test func everySharedConstantHasOnePlaceholderInTheScriptFile() {
        for constant in DashboardPage.sharedConstants {
            let occurrences = DashboardPage.scriptAsset.components(separatedBy: constant.placeholder).count - 1
            #expect(occurrences == 1, "\(constant.placeholder) appears \(occurrences) times in dashboard.js")
        }
    }

    @Test func scriptSharesTheReportsPalettesAndGeometry() {
        let script = DashboardPage.javascript
        #expect(script.contains("const FILL_STOPS = \(FillColorScale.javascriptStops);"))
        #expect(script.contains("const NO_DOCKS_COLOR = '\(FillColorScale.noDocks.hex)';"))
        #expect(script.contains("const NODE_COLORS = \(NodePalette.javascriptArray);"))
        #expect(script.contains("const TIMELINE_SECONDS = \(DashboardSnapshot.timelineSeconds);"))
        #expect(script.contains("const MIN_LONGITUDE_SCALE = \(MapProjection.minimumLongitudeScale);"))
        #expect(script.contains("Math.min(6, 2 + Math.sqrt(Math.max(0, capacity || 0)) * 0.5)"))
        #expect(StationMapSVG.radius(capacity: 16) == min(6, 2 + 16.0.squareRoot() * 0.5))
        #expect(!script.contains("__"))
    }
}
