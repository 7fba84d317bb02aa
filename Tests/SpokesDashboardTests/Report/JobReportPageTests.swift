import Foundation
import Testing
@testable import SpokesBikes
import SpokesCluster
@testable import SpokesDashboard

@Suite struct JobReportPageTests {
    static let generatedAt = Date(timeIntervalSince1970: 1_750_000_000)
    static let hostile = "<script>alert(1)</script>&\"'"
    static let hostileEscaped = "&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;&#39;"

    /// A real run: 60 Milano users x 5 paths, one at a time, so the seed fixes every figure.
    static func simulated() async throws -> SimulationReport {
        let options = SimulationOptions(users: 60, paths: 5, seed: 42, timing: MoveTiming(moveTime: 0.1, timeScale: 0), workers: 1)
        return try await Simulation(network: BundledNetworks.milano, options: options).run()
    }

    /// The same run as a cluster job would report it.
    static func clusterJob() async throws -> SimulationReport {
        var report = try await simulated()
        report.job = "job-8c3f442b"
        report.finishedAt = "2025-06-15T15:01:02Z"
        report.retries = 3
        report.tasksPerNode = ["demo-1": 21, "demo-2": 20, "demo-3": 19]
        report.retriedUsers = [.init(user: 4, reasons: ["attempt 1 on demo-3: connection to demo-3 lost"])]
        report.failedUsers = [.init(user: 17, reasons: ["attempt 1 on demo-3: no result within the 5.0 s deadline", "attempt 2 on demo-1: cancelled"])]
        return report
    }

    static func render(_ report: SimulationReport) -> String {
        JobReportPage.html(report, generatedAt: generatedAt)
    }

    func occurrences(of needle: String, in text: some StringProtocol) -> Int {
        text.components(separatedBy: needle).count - 1
    }

    /// The markup of `<figure class="NAME">`, up to its end.
    func figure(_ name: String, in html: String) throws -> Substring {
        let start = try #require(html.range(of: "<figure class=\"\(name)\">"))
        let end = try #require(html.range(of: "</figure>", range: start.upperBound..<html.endIndex))
        return html[start.lowerBound..<end.upperBound]
    }

    @Test func isOneSelfContainedDocumentWithoutScripts() async throws {
        let html = Self.render(try await Self.clusterJob())
        #expect(html.hasPrefix("<!DOCTYPE html>\n<html lang=\"en\">"))
        #expect(html.hasSuffix("</html>\n"))
        #expect(!html.lowercased().contains("<script"))
        #expect(occurrences(of: "<style>", in: html) == 1)
        #expect(!html.contains("style=\""))
        #expect(!html.contains("src=\"") && !html.contains("href=\"") && !html.contains("@import") && !html.contains("url("))
        #expect(!html.contains("http://") || html.components(separatedBy: "http://").dropFirst().allSatisfy { $0.hasPrefix("www.w3.org/2000/svg") })
        #expect(!html.contains("https://"))
    }

    @Test func saysWhenTheJobFinishedApartFromWhenThePageWasMade() async throws {
        var report = try await Self.clusterJob()
        report.finishedAt = nil
        let old = Self.render(report)
        #expect(!old.contains("finished 2") && old.contains("page made 2025-06-15 15:06:40 UTC"), "a report stored before finishedAt existed")
        let fresh = try await Self.simulated()
        let finished = try #require(fresh.finishedAt)
        #expect(finished.count == 20 && finished.hasSuffix("Z"), "\(finished)")
        #expect(Self.render(fresh).contains("finished \(finished.replacingOccurrences(of: "T", with: " ").dropLast()) UTC · page made"))
    }

    @Test func summarisesInTheTerminalsWords() async throws {
        let report = try await Self.clusterJob()
        let html = Self.render(report)
        #expect(html.contains("<h1>BikeMi <span class=\"network-id\">(bikemi)</span></h1>"))
        #expect(html.contains("<code>job-8c3f442b</code>"))
        #expect(html.contains("finished 2025-06-15 15:01:02 UTC · page made 2025-06-15 15:06:40 UTC"))
        #expect(html.contains("<th scope=\"row\">Users completed</th><td>\(report.completedUsers) of 60</td>"))
        #expect(html.contains("<th scope=\"row\">Paths ridden</th><td>\(report.totalPaths)</td>"))
        #expect(html.contains("(failed takes \(report.failedTakes), failed leaves \(report.failedLeaves))"))
        #expect(html.contains("60 users x 5 paths · seed 42 · move time 0.10 s · time scale 0 · 1 at once"))
        #expect(html.contains("\(report.bikesBefore) before, \(report.bikesAfter) after: <span class=\"ok-text\">conserved</span>"))
        #expect(html.contains("<th scope=\"row\">Retries</th><td>3</td>"))
        #expect(html.contains("<strong>Bikes conserved</strong>"))
    }

    @Test func drawsOneStationCirclePerStationInEachMap() async throws {
        let report = try await Self.clusterJob()
        let html = Self.render(report)
        #expect(report.stations.count == 318)
        #expect(occurrences(of: "<circle class=\"station\"", in: try figure("before", in: html)) == 318)
        #expect(occurrences(of: "<circle class=\"station\"", in: try figure("after", in: html)) == 318)
        #expect(occurrences(of: "<circle class=\"station\"", in: html) == 636)
    }

    @Test func histogramsCountEveryUser() async throws {
        let html = Self.render(try await Self.clusterJob())
        let titles = try Regex(#"<rect class="bar"[^>]*><title>[^<]*: (\d+) users?</title>"#)
        for chart in ["Histogram of waiting time per user", "Histogram of paths ridden per user"] {
            let start = try #require(html.range(of: "aria-label=\"\(chart)\""))
            let end = try #require(html.range(of: "</svg>", range: start.upperBound..<html.endIndex))
            let counts = html[start.upperBound..<end.lowerBound].matches(of: titles).compactMap { Int($0.output[1].substring ?? "") }
            #expect(!counts.isEmpty)
            #expect(counts.reduce(0, +) == 60, "\(chart)")
        }
    }

    @Test func showsUsersPerNodeForClusterJobsOnly() async throws {
        let job = Self.render(try await Self.clusterJob())
        #expect(job.contains("<section id=\"nodes\">"))
        for node in ["demo-1", "demo-2", "demo-3"] { #expect(job.contains("data-node=\"\(node)\"")) }
        #expect(job.contains("21 (35.0%)"))
        let simulate = Self.render(try await Self.simulated())
        #expect(!simulate.contains("<section id=\"nodes\">"))
        #expect(!simulate.contains("data-node="))
        #expect(simulate.contains("one process (<code>spokes simulate</code>)"))
    }

    @Test func escapesEverythingItIsGiven() async throws {
        var report = try await Self.clusterJob()
        report.network.name = Self.hostile
        report.job = Self.hostile
        report.stations[0].name = Self.hostile
        report.stationsBefore?[0].name = Self.hostile
        report.tasksPerNode = [Self.hostile: 60]
        report.failedUsers = [.init(user: 1, reasons: [Self.hostile])]
        report.retriedUsers = [.init(user: 2, reasons: ["attempt 1 on \(Self.hostile): lost"])]
        report.conservation.violations = [Self.hostile]
        let html = Self.render(report)
        #expect(!html.lowercased().contains("<script"))
        #expect(!html.contains("\"'"))
        #expect(occurrences(of: Self.hostileEscaped, in: html) >= 8)
        #expect(html.contains("<title>\(Self.hostileEscaped): "))
        #expect(html.contains("data-node=\"\(Self.hostileEscaped)\""))
    }

    @Test func anOldReportWithoutStationsBeforeStillRenders() async throws {
        var report = try await Self.clusterJob()
        report.stationsBefore = nil
        let html = Self.render(report)
        #expect(occurrences(of: "<circle class=\"station\"", in: html) == 318)
        #expect(occurrences(of: "<circle class=\"station\"", in: try figure("after", in: html)) == 318)
        #expect(html.contains("only the end is shown"))
        #expect(!html.contains("Biggest changes"))
    }

    @Test func warnsWhenBikesAreNotConserved() async throws {
        var report = try await Self.clusterJob()
        let network = try BundledNetworks.milano
        var after = network.stations
        _ = after[0].takeBike()
        report.conservation = ConservationCheck(before: network.stations, after: after, bikesInUse: 0)
        let html = Self.render(report)
        #expect(html.contains("<section class=\"verdict bad\" id=\"conservation\" role=\"alert\">"))
        #expect(html.contains("<strong>Bikes NOT conserved</strong>"))
        #expect(html.contains("1 bike missing"))
        #expect(html.contains("<span class=\"bad-text\">NOT CONSERVED</span>"))
        #expect(!html.contains("<strong>Bikes conserved</strong>"))
    }

    @Test func listsEveryReasonAndCapsLongLists() async throws {
        var report = try await Self.clusterJob()
        report.failedUsers = (0..<250).map { SimulationReport.FailedUser(user: $0, reasons: ["attempt 1 on demo-2: reason \($0)"]) }
        report.retriedUsers = [.init(user: 999, reasons: ["attempt 1 on demo-1: lost"])]
        let html = Self.render(report)
        #expect(html.contains("<li>attempt 1 on demo-2: reason 199</li>"))
        #expect(!html.contains("reason 200<"))
        #expect(html.contains("and 50 more"))
        #expect(html.contains("and 1 more"))
        #expect(html.contains("<strong>250 users failed</strong>"))
    }

    @Test func saysSoWhenNothingWasRetried() async throws {
        var report = try await Self.clusterJob()
        report.retries = 0
        report.failedUsers = []
        report.retriedUsers = []
        #expect(Self.render(report).contains("No retries: every user completed on its first attempt."))
        #expect(Self.render(try await Self.simulated()).contains("<p id=\"no-retries\">No retries"))
    }

    @Test func saysACancelledJobWasCancelled() async throws {
        var report = try await Self.clusterJob()
        report.cancelled = true
        let html = Self.render(report)
        #expect(html.contains("<strong>Cancelled</strong>"))
        #expect(html.contains("The job was cancelled"))
        #expect(html.contains("(interrupted)"))
        report.cancelReason = "cancelled by the submitter"
        report.cancelledUsers = [.init(user: 3, reasons: ["attempt 1 on demo-2: cancelled by the submitter while it ran"])]
        let said = Self.render(report)
        #expect(said.contains("The job was cancelled (cancelled by the submitter)"))
        #expect(said.contains("<th scope=\"row\">Cancelled users</th><td>1</td>"))
        #expect(!said.contains("(interrupted)"))
    }

    @Test func rendersTheSameBytesForTheSameReport() async throws {
        let report = try await Self.clusterJob()
        #expect(Self.render(report) == Self.render(report))
        let decoded = try JSONDecoder().decode(SimulationReport.self, from: JSONEncoder().encode(report))
        #expect(Self.render(decoded) == Self.render(report))
    }

    @Test func contentSecurityPolicyAllowsExactlyItsOwnStyle() async throws {
        let html = Self.render(try await Self.simulated())
        let style = try #require(html.firstMatch(of: try Regex(#"<style>([\s\S]*?)</style>"#))?.output[1].substring)
        #expect(String(style) == JobReportPage.style)
        let digest = Data(SHA256.hash(Array(style.utf8))).base64EncodedString()
        #expect(JobReportPage.contentSecurityPolicy.contains("style-src 'sha256-\(digest)'"))
        #expect(JobReportPage.contentSecurityPolicy.hasPrefix("default-src 'none';"))
    }
}
