import SpokesTestKit
import Foundation
import SpokesBikes
import SpokesCluster
import SpokesHTTP
import Testing
@testable import SpokesDashboard

/// The dashboard's answers, from a real in-process cluster, without a network between
/// the router and the test.
@Suite(.processLane, .timeLimit(.minutes(1)))
struct DashboardRouterTests {
    func router(_ node: ClusterNode) -> DashboardRouter {
        let observer = ClusterObserver(node: node)
        return DashboardRouter(observer: observer, feed: SnapshotFeed(observer: observer), access: DashboardAccess(secret: node.settings.secret))
    }

    func get(_ router: DashboardRouter, _ target: String, method: HTTPMethod = .get, headers: HTTPHeaders = ["Host": "127.0.0.1:8787"]) async throws -> HTTPResponse {
        await router.respond(to: try HTTPRequest(method: method, target: target, headers: headers))
    }

    func json(_ response: HTTPResponse) throws -> [String: Any] {
        guard case .bytes(let bytes) = response.body else { throw CocoaError(.coderInvalidValue) }
        return try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    func text(_ response: HTTPResponse) -> String {
        guard case .bytes(let bytes) = response.body else { return "" }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func metricsCountEachNodesOwnMembersSlotsTasksAndJobsInThePrometheusFormat() async throws {
        let cluster = try await DashboardCluster.start(2, slots: 2)
        defer { cluster.stop() }
        let job = BikeJob(network: try DashboardCluster.network(),
                          options: SimulationOptions(users: 10, paths: 2, seed: 5, timing: MoveTiming(moveTime: 0.1, timeScale: 0)))
        _ = try await cluster.services[0].submit(job, listener: nil)
        var coordinator = router(cluster.nodes[0])
        coordinator.build = NodeMetrics.Build(version: "9.9.9", commit: "0123456789ab", protocolVersions: "2")
        let response = try await get(coordinator, "/metrics")
        #expect(response.status == .ok)
        #expect(response.headers.first("Content-Type") == PrometheusText.contentType)
        let first = ExpositionChecker(text(response))
        #expect(first.problems == [])
        #expect(first.value("spokes_build_info", ["version": "9.9.9", "commit": "0123456789ab", "protocol_versions": "2"]) == 1)
        #expect(first.value("spokes_node_info", ["cluster": cluster.nodes[0].settings.cluster, "node": "d0"]) == 1)
        #expect(first.value("spokes_members", ["state": "alive"]) == 2)
        #expect(first.value("spokes_slots", ["budget": "cpu"]) == 2)
        #expect(first.value("spokes_jobs", ["state": "running"]) == 0)
        #expect(first.value("spokes_jobs_ended_total", ["state": "finished"]) == 1)
        #expect(first.value("spokes_rejections_total", ["kind": "frame_too_large"]) == 0)
        #expect(first.value("spokes_raft_replicas", ["role": "leader"]) == 0, "no Raft host in this test cluster")
        #expect(try #require(first.value("spokes_process_resident_memory_bytes")) > 0)
        #expect(first.value("spokes_task_retries_total") == 0)
        #expect(try #require(first.value("spokes_connection_frames_total", ["direction": "sent"])) > 10, "the job's calls, at least")
        #expect(try #require(first.value("spokes_connection_bytes_total", ["direction": "received"])) > 0)
        #expect(first.families["spokes_raft_commit_seconds"] == nil, "no Raft host in this test cluster")

        let second = ExpositionChecker(text(try await get(router(cluster.nodes[1]), "/metrics")))
        #expect(second.problems == [])
        #expect(second.value("spokes_jobs_ended_total", ["state": "finished"]) == 0, "d1 coordinated nothing")
        let succeeded = [first, second].compactMap { $0.value("spokes_task_attempts_total", ["kind": "bikes.user", "outcome": "succeeded"]) }
        #expect(succeeded.count == 2 && succeeded.reduce(0, +) == 10, "each user's one attempt, counted by the node that ran it: \(succeeded)")
    }

    @Test func theAPIDescribesTheClusterAndAFinishedBikeJob() async throws {
        let cluster = try await DashboardCluster.start(2, slots: 2)
        defer { cluster.stop() }
        let job = BikeJob(network: try DashboardCluster.network(),
                          options: SimulationOptions(users: 10, paths: 2, seed: 5, timing: MoveTiming(moveTime: 0.1, timeScale: 0)))
        let report = try await cluster.services[1].submit(job, listener: nil)
        let router = router(cluster.nodes[0])

        let members = try json(try await get(router, "/api/members"))
        #expect(members["node"] as? String == "d0")
        #expect((members["members"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["d0", "d1"])

        let jobs = try #require(try json(try await get(router, "/api/jobs"))["jobs"] as? [[String: Any]])
        let view = try #require(jobs.first { $0["id"] as? String == job.id })
        #expect(view["state"] as? String == "finished")
        #expect(view["done"] as? Int == 10 && view["total"] as? Int == 10)
        #expect(view["coordinator"] as? String == "d1")
        #expect((view["stationBikes"] as? [Int]) == report.stations.map(\.freeBikes))

        let one = try json(try await get(router, "/api/jobs/\(job.id)"))
        #expect(one["id"] as? String == job.id)
        let stations = try json(try await get(router, "/api/jobs/\(job.id)/stations"))
        #expect((stations["stations"] as? [[String: Any]])?.count == 6)
        #expect(stations["network"] as? String == job.network.name)
        let stored = try json(try await get(router, "/api/jobs/\(job.id)/report"))
        #expect(stored["completedUsers"] as? Int == 10)
        let tasks = try json(try await get(router, "/api/tasks"))
        #expect((tasks["tasks"] as? [[String: Any]])?.count == 10, "one attempt per user on the stream")

        let page = try await get(router, "/jobs/\(job.id)/report.html")
        #expect(page.status == .ok)
        #expect(text(page).contains("<svg"))
        #expect(page.headers.first("Content-Security-Policy") == JobReportPage.contentSecurityPolicy)
    }

    @Test func unknownJobsAndPathsAre404WithAReason() async throws {
        let cluster = try await DashboardCluster.start(1)
        defer { cluster.stop() }
        let router = router(cluster.nodes[0])
        for target in ["/api/jobs/job-none", "/api/jobs/job-none/stations", "/api/jobs/job-none/report", "/api/nothing", "/nothing/here"] {
            let response = try await get(router, target)
            #expect(response.status == .notFound, "\(target)")
            #expect((try json(response)["error"] as? String)?.isEmpty == false, "\(target) says why")
        }
        let page = try await get(router, "/jobs/job-none/report.html")
        #expect(page.status == .notFound)
        #expect(text(page).contains("not a bike job"))
    }

    @Test func thePageItsFilesAndItsPolicy() async throws {
        let cluster = try await DashboardCluster.start(1)
        defer { cluster.stop() }
        let router = router(cluster.nodes[0])
        let page = try await get(router, "/")
        #expect(page.status == .ok)
        #expect(text(page) == DashboardPage.html)
        #expect(page.headers.first("Content-Security-Policy")?.contains("script-src 'self'") == true)
        #expect(page.headers.first("X-Content-Type-Options") == "nosniff")
        #expect(page.headers.first("Referrer-Policy") == "no-referrer", "the token never leaves in a Referer")
        let script = try await get(router, "/static/dashboard.js")
        #expect(script.headers.first("Content-Type") == "text/javascript; charset=utf-8")
        #expect(text(script) == DashboardPage.javascript)
        let style = try await get(router, "/static/dashboard.css")
        #expect(style.headers.first("Content-Type") == "text/css; charset=utf-8")
        #expect(try await get(router, "/static/other.js").status == .notFound)
    }

    @Test func onlyGetAndHeadAreAnswered() async throws {
        let cluster = try await DashboardCluster.start(1)
        defer { cluster.stop() }
        let response = try await get(router(cluster.nodes[0]), "/api/snapshot", method: .post)
        #expect(response.status == .methodNotAllowed)
        #expect(response.headers.first("Allow") == "GET, HEAD")
    }

    @Test func withASecretTheAPIAsksForTheTokenInJSONAndThePageInHTML() async throws {
        let secret = try ClusterSecret("s3cret-that-is-long-enough", source: "test")
        let cluster = try await DashboardCluster.start(1, secret: secret)
        defer { cluster.stop() }
        let router = router(cluster.nodes[0])
        let api = try await get(router, "/api/snapshot")
        #expect(api.status == .unauthorized)
        #expect((try json(api)["error"] as? String)?.contains("token") == true)
        let page = try await get(router, "/")
        #expect(page.status == .unauthorized)
        #expect(text(page).contains("<h1>Spokes dashboard</h1>"))
        let granted = try await get(router, "/?token=\(secret.dashboardToken)")
        #expect(granted.status == .seeOther)
        #expect(granted.headers.first("Location") == "/")
        let cookie = try #require(granted.headers.first("Set-Cookie")?.split(separator: ";").first.map(String.init))
        let snapshot = try await get(router, "/api/snapshot", headers: ["Host": "127.0.0.1:8787", "Cookie": cookie])
        #expect(snapshot.status == .ok)
        #expect(try json(snapshot)["node"] as? String == "d0")
    }
}
