import SpokesTestKit
import Foundation
import SpokesBikes
@testable import SpokesCluster
@testable import SpokesHTTP
import SpokesConcurrency
import Testing
@testable import SpokesDashboard

/// A node's dashboard served on loopback, asked over real connections.
@Suite(.processLane, .timeLimit(.minutes(1)))
struct DashboardTests {
    @Test func aBrowserWithTheTokenGetsThePageAndLiveSnapshots() async throws {
        let secret = try ClusterSecret("s3cret-that-is-long-enough", source: "test")
        let cluster = try await DashboardCluster.start(2, secret: secret)
        defer { cluster.stop() }
        let dashboard = try Dashboard(node: cluster.nodes[0])
        dashboard.start()
        defer { dashboard.stop() }
        let port = dashboard.server.address.port
        #expect(dashboard.url == "http://127.0.0.1:\(port)/?token=\(secret.dashboardToken)")

        let first = try await LoopbackHTTP.get(port: port, "/?token=\(secret.dashboardToken)")
        #expect(first.status == 303)
        let cookie = try #require(first.header("Set-Cookie")?.split(separator: ";").first.map(String.init))
        let page = try await LoopbackHTTP.get(port: port, "/", headers: ["Cookie": cookie])
        #expect(page.status == 200)
        #expect(page.body.contains("/static/dashboard.js"))

        let (head, event) = try await LoopbackHTTP.firstEvent(port: port, "/api/events", headers: ["Cookie": cookie])
        #expect(head.status == 200)
        #expect(head.header("Content-Type") == "text/event-stream")
        #expect(event.hasPrefix("event: snapshot\ndata: {"))
        let json = try #require(event.split(separator: "\n").first { $0.hasPrefix("data: ") }?.dropFirst("data: ".count))
        let snapshot = try JSONDecoder().decode(DashboardSnapshot.self, from: Data(json.utf8))
        #expect(snapshot.members.map(\.name) == ["d0", "d1"])

        let refused = try await LoopbackHTTP.get(port: port, "/api/snapshot")
        #expect(refused.status == 401)
    }

    @Test func aScraperWithTheTokenAsBearerGetsTheMetricsAndOneWithoutIsRefused() async throws {
        let secret = try ClusterSecret("s3cret-that-is-long-enough", source: "test")
        let cluster = try await DashboardCluster.start(1, secret: secret)
        defer { cluster.stop() }
        let dashboard = try Dashboard(node: cluster.nodes[0])
        dashboard.start()
        defer { dashboard.stop() }
        let port = dashboard.server.address.port
        let scraped = try await LoopbackHTTP.get(port: port, "/metrics", headers: ["Authorization": "Bearer \(secret.dashboardToken)"])
        #expect(scraped.status == 200)
        #expect(scraped.header("Content-Type") == PrometheusText.contentType)
        let checked = ExpositionChecker(scraped.body)
        #expect(checked.problems == [])
        #expect(checked.value("spokes_members", ["state": "alive"]) == 1)
        let refused = try await LoopbackHTTP.get(port: port, "/metrics")
        #expect(refused.status == 401)
        #expect(!refused.body.contains("spokes_"))
    }

    @Test func aFloodOfHalfOpenConnectionsLeavesTheTokenHoldersServed() async throws {
        let secret = try ClusterSecret("s3cret-that-is-long-enough", source: "test")
        let cluster = try await DashboardCluster.start(1, secret: secret)
        defer { cluster.stop() }
        let dashboard = try Dashboard(node: cluster.nodes[0])
        dashboard.start()
        defer { dashboard.stop() }
        let address = dashboard.server.address
        // 200 connections from 127.0.0.1 that never send a request, held open: far over
        // the default caps (16 per address, 64 in all).
        let strangers = try await runBlocking("test.flood") { try (0..<200).map { _ in try Socket.connect(to: address, timeout: 2) } }
        defer { strangers.forEach { close($0) } }
        for attempt in 1...3 {
            let answer = try await LoopbackHTTP.get(port: address.port, "/api/members", headers: ["Authorization": "Bearer \(secret.dashboardToken)"])
            #expect(answer.status == 200, "request \(attempt) with the token through the flood: \(answer.status)")
        }
        #expect(dashboard.server.refusals["crowded_out", default: 0] >= 200 - HTTPLimits().maxIdleConnections)
    }

    @Test func withoutASecretItRefusesToListenBeyondLoopbackAndNamesTheFix() async throws {
        var settings = ClusterSettings()
        settings.cluster = "dash-\(UUID().uuidString.prefix(8))"
        settings.discoveryMode = .off
        settings.dashboardHost = "0.0.0.0"
        settings.dashboardPort = 0
        let node = try ClusterNode(settings: settings)
        defer { node.stop() }
        #expect(throws: DashboardError.insecureAddress(host: "0.0.0.0")) { try Dashboard(node: node) }
        #expect(DashboardError.insecureAddress(host: "0.0.0.0").description.contains("secret"))
    }

    @Test func aTakenPortIsAClearError() async throws {
        let cluster = try await DashboardCluster.start(1)
        defer { cluster.stop() }
        let first = try Dashboard(node: cluster.nodes[0])
        defer { first.stop() }
        var settings = ClusterSettings()
        settings.cluster = "dash-\(UUID().uuidString.prefix(8))"
        settings.discoveryMode = .off
        settings.dashboardPort = first.server.address.port
        let node = try ClusterNode(settings: settings)
        defer { node.stop() }
        do {
            _ = try Dashboard(node: node)
            Issue.record("two dashboards bound one port")
        } catch {
            #expect(error.description.contains("cannot serve the dashboard on 127.0.0.1:\(first.server.address.port)"))
            #expect(error.description.contains("--dashboard PORT"))
        }
    }
}
