import Foundation
import SpokesCluster
import Testing
@testable import SpokesBikes
@testable import SpokesDashboard

@Suite struct SweepReportPageTests {
    static let generatedAt = Date(timeIntervalSince1970: 1_750_000_000)
    static let hostile = "<script>alert(1)</script>&\"'"
    static let hostileEscaped = "&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;&#39;"

    /// Real runs on six contended Milano stations: `lists` expanded, each run's node
    /// alternating between n1 and n2.
    static func sweep(_ lists: [SweepParameter: String]) async throws -> SweepReport {
        var network = try BundledNetworks.milano
        network.stations = Array(network.stations.prefix(6))
        let plan = try SweepPlan(network: .inline(network: network), lists: lists)
        var runs: [SweepReport.Run] = []
        for index in 0..<plan.runCount {
            let figures = try await SweepRunTask().run(plan.taskInput(forRun: index))
            runs.append(.init(run: plan.run(at: index), node: index % 2 == 0 ? "n1" : "n2", figures: figures))
        }
        return SweepReport(network: network, runs: runs, job: "sweep-1f2e", wallTime: 1.5)
    }

    /// Users 10, 20, 40 x paths 2, 4, over seeds 1-4: 24 runs in 6 groups.
    static func twoVaried() async throws -> SweepReport {
        try await sweep([.users: "40,10,20", .paths: "2,4", .seed: "1-4"])
    }

    static func render(_ report: SweepReport) -> String {
        SweepReportPage.html(report, generatedAt: generatedAt)
    }

    func occurrences(of needle: String, in text: some StringProtocol) -> Int {
        text.components(separatedBy: needle).count - 1
    }

    /// The markup from `start` to the end of the element it opens with `end`.
    func element(from start: String, to end: String, in html: String) throws -> Substring {
        let from = try #require(html.range(of: start), "\(start)")
        let to = try #require(html.range(of: end, range: from.upperBound..<html.endIndex))
        return html[from.lowerBound..<to.upperBound]
    }

    @Test func isOneSelfContainedWellFormedDocumentWithoutScripts() async throws {
        let html = Self.render(try await Self.twoVaried())
        #expect(html.hasPrefix("<!DOCTYPE html>\n<html lang=\"en\">"))
        #expect(html.hasSuffix("</html>\n"))
        #expect(MarkupBalance.problem(in: html) == nil)
        #expect(!html.lowercased().contains("<script"))
        #expect(occurrences(of: "<style>", in: html) == 1)
        #expect(!html.contains("style=\""))
        #expect(!html.contains("src=\"") && !html.contains("href=\"") && !html.contains("@import") && !html.contains("url("))
        #expect(html.components(separatedBy: "http://").dropFirst().allSatisfy { $0.hasPrefix("www.w3.org/2000/svg") })
        #expect(!html.contains("https://"))
        #expect(!html.contains("\"nan\"") && !html.contains(">nan<") && !html.contains("inf\""))
    }

    @Test func chartsEveryFigureAgainstEachVariedParameterWithALinePerOtherValue() async throws {
        let report = try await Self.twoVaried()
        #expect(report.varied == [.users, .paths])
        let html = Self.render(report)
        let byUsers = try element(from: "<section class=\"against\" id=\"by-users\">", to: "</section>", in: html)
        let byPaths = try element(from: "<section class=\"against\" id=\"by-paths\">", to: "</section>", in: html)
        for section in [byUsers, byPaths] {
            #expect(occurrences(of: "<svg class=\"chart sweep\"", in: section) == 4, "one chart per figure")
            #expect(occurrences(of: "<circle class=\"mean\"", in: section) == 4 * 6, "every group in every chart")
            #expect(occurrences(of: "<path class=\"ci\"", in: section) == 4 * 6, "four runs per group: every group has an interval")
        }
        #expect(occurrences(of: "<g class=\"series\"", in: byUsers) == 4 * 2, "a line per paths value")
        #expect(byUsers.contains("data-series=\"paths 2\"") && byUsers.contains("data-series=\"paths 4\""))
        #expect(occurrences(of: "<g class=\"series\"", in: byPaths) == 4 * 3, "a line per users value")
        // Categories ascend whatever the order given (40,10,20).
        let waiting = try element(from: "aria-label=\"Waiting time per user against users\"", to: "</svg>", in: String(byUsers))
        let ten = try #require(waiting.range(of: ">10</text>")), forty = try #require(waiting.range(of: ">40</text>"))
        #expect(ten.lowerBound < forty.lowerBound)
        #expect(byUsers.contains("<span class=\"key\">"), "a legend for the lines")
        // Each line runs left to right through its groups.
        let lines = byUsers.matches(of: /<polyline class="line" points="([^"]*)"/).map { String($0.output.1) }
        #expect(lines.count == 4 * 2)
        for line in lines {
            let xs = line.split(separator: " ").compactMap { Double($0.split(separator: ",")[0]) }
            #expect(xs.count == 3 && xs == xs.sorted(), "\(line)")
        }
    }

    @Test func tooltipsCarryTheGroupsStatistics() async throws {
        let report = try await Self.twoVaried()
        let html = Self.render(report)
        let group = report.groups[0]
        let takes = try #require(group.failedTakes)
        let interval = try #require(takes.ci95)
        let tooltip = "<title>\(HTML.escape(group.setting.label)): mean \(AxisTicks.label(takes.mean)), 95% CI "
            + "\(AxisTicks.label(interval.lower)) to \(AxisTicks.label(interval.upper)), p50 \(AxisTicks.label(takes.p50)), "
            + "p95 \(AxisTicks.label(takes.p95)) (4 runs)</title>"
        #expect(html.contains(tooltip), "\(tooltip)")
    }

    @Test func listsEveryGroupAndEachNodesShareOfRuns() async throws {
        let html = Self.render(try await Self.twoVaried())
        let table = try element(from: "<table class=\"groups\">", to: "</table>", in: html)
        #expect(occurrences(of: "<tr><td>", in: table) == 6)
        #expect(table.contains("<tr><td>users 40 · paths 2</td><td class=\"number\">4</td>"), "what varies")
        #expect(html.contains("<p class=\"note\">Every group: move time 0.1 s · time scale 0</p>"), "what all share, once")
        let nodes = try element(from: "<section id=\"nodes\">", to: "</section>", in: html)
        #expect(nodes.contains("<title>n1: 12 runs</title>") && nodes.contains("<title>n2: 12 runs</title>"))
        #expect(nodes.contains("12 (50.0%)"))
        #expect(html.contains("<strong>Bikes conserved in every run</strong>"))
        #expect(html.contains("Job <code>sweep-1f2e</code>"))
        #expect(html.contains("generated 2025-06-15 15:06:40 UTC"))
    }

    @Test func whenOnlyTheSeedVariesShowsEachFiguresSpreadOverTheRuns() async throws {
        let report = try await Self.sweep([.users: "20", .paths: "3", .seed: "1-6"])
        let html = Self.render(report)
        #expect(!html.contains("class=\"against\""))
        let titles = try Regex(#"<rect class="bar"[^>]*><title>[^<]*: (\d+) runs?</title>"#)
        for figure in SweepFigure.allCases {
            let chart = try element(from: "aria-label=\"Histogram of \(figure.name) over the runs\"", to: "</svg>", in: html)
            let counts = chart.matches(of: titles).compactMap { Int($0.output[1].substring ?? "") }
            #expect(counts.reduce(0, +) == 6, "\(figure)")
        }
        #expect(MarkupBalance.problem(in: html) == nil)
    }

    @Test func saysWhenRunsFailedOrDidNotConserveBikes() async throws {
        var report = try await Self.sweep([.users: "10", .paths: "2", .seed: "1-3"])
        report.runs[1] = .init(run: report.runs[1].run, failures: ["attempt 1 on n2: connection to n2 lost", "attempt 2 on n1: cancelled"])
        report.runs[2].figures?.conservation.violations = ["station x has -1 bikes"]
        report = SweepReport(network: Network(id: report.network.id, name: report.network.name, stations: []), runs: report.runs)
        let html = Self.render(report)
        #expect(html.contains("<strong>Bikes NOT conserved in 1 run</strong>"))
        #expect(html.contains("<strong>1 run failed</strong>"))
        #expect(html.contains("<li>attempt 1 on n2: connection to n2 lost</li><li>attempt 2 on n1: cancelled</li>"))
        #expect(html.contains("1 failed</span>") && html.contains("1 NOT CONSERVED</span>"))
        #expect(MarkupBalance.problem(in: html) == nil)
    }

    @Test func escapesEverythingItIsGiven() async throws {
        var report = try await Self.sweep([.users: "10,20", .paths: "2", .seed: "1-2"])
        report.network.name = Self.hostile
        report.job = Self.hostile
        report.runs[0].node = Self.hostile
        report.runs[1] = .init(run: report.runs[1].run, failures: [Self.hostile])
        var goalRun = report.runs[2]
        goalRun.run.setting.goal = Self.hostile
        report.runs[2] = goalRun
        report = SweepReport(network: Network(id: Self.hostile, name: Self.hostile, stations: []), runs: report.runs, job: Self.hostile)
        let html = Self.render(report)
        #expect(!html.lowercased().contains("<script"))
        #expect(!html.contains("\"'"))
        #expect(occurrences(of: Self.hostileEscaped, in: html) >= 6)
        #expect(html.contains("data-node=\"\(Self.hostileEscaped)\""))
        #expect(MarkupBalance.problem(in: html) == nil)
    }

    @Test func rendersTheSameBytesForTheSameReport() async throws {
        let report = try await Self.twoVaried()
        #expect(Self.render(report) == Self.render(report))
        let decoded = try JSONDecoder().decode(SweepReport.self, from: JSONEncoder().encode(report))
        #expect(Self.render(decoded) == Self.render(report))
    }

    @Test func contentSecurityPolicyAllowsExactlyItsOwnStyle() async throws {
        let html = Self.render(try await Self.sweep([.users: "10", .paths: "2", .seed: "1"]))
        let style = try #require(html.firstMatch(of: try Regex(#"<style>([\s\S]*?)</style>"#))?.output[1].substring)
        #expect(String(style) == SweepReportPage.style)
        let digest = Data(SHA256.hash(Array(style.utf8))).base64EncodedString()
        #expect(SweepReportPage.contentSecurityPolicy.contains("style-src 'sha256-\(digest)'"))
        #expect(SweepReportPage.contentSecurityPolicy.hasPrefix("default-src 'none';"))
    }
}
