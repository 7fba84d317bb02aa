import Testing
@testable import SpokesCluster
@testable import SpokesHTTP
@testable import SpokesDashboard

@Suite struct DashboardAccessTests {
    let secret = try! ClusterSecret("s3cret-that-is-long-enough", source: "test")
    var token: String { secret.dashboardToken }

    func request(_ target: String, headers: HTTPHeaders = ["Host": "127.0.0.1:8787"]) throws -> HTTPRequest {
        try HTTPRequest(target: target, headers: headers)
    }

    @Test func theTokenInTheAddressSetsACookieAndLeavesTheAddress() throws {
        let decision = DashboardAccess(secret: secret).decide(try request("/?token=\(token)&transport=poll"))
        #expect(decision == .grant(cookie: "spokes_dashboard=\(token); Path=/; HttpOnly; SameSite=Strict", location: "/?transport=poll"))
        #expect(DashboardAccess(secret: secret).decide(try request("/api/jobs?token=\(token)")) == .grant(
            cookie: "spokes_dashboard=\(token); Path=/; HttpOnly; SameSite=Strict", location: "/api/jobs"))
    }

    @Test func theRedirectAfterTheTokenNeverLeavesTheDashboard() throws {
        let access = DashboardAccess(secret: secret)
        let cases = [
            ("//evil.example/?token=\(token)", "/evil.example/"),
            ("///evil.example/x?token=\(token)&a=1", "/evil.example/x?a=1"),
            ("/\\evil.example/?token=\(token)", "/evil.example/"),
            ("/\\/evil.example?token=\(token)", "/evil.example"),
            ("http://evil.example/?token=\(token)", "/"),
            ("HTTP://evil.example//x?token=\(token)", "/x"),
            ("http://evil.example?token=\(token)&b=2", "/?b=2"),
            ("/jobs/j-1/report.html?token=\(token)", "/jobs/j-1/report.html"),
        ]
        for (target, location) in cases {
            guard case .grant(_, let granted) = access.decide(try request(target)) else {
                Issue.record("\(target) was not granted")
                continue
            }
            #expect(granted == location, "\(target)")
            #expect(granted.hasPrefix("/") && !granted.hasPrefix("//") && !granted.hasPrefix("/\\"), "\(target) redirects off the dashboard")
        }
    }

    @Test func theCookieOrABearerTokenLetsARequestIn() throws {
        let access = DashboardAccess(secret: secret)
        #expect(access.decide(try request("/api/snapshot", headers: ["Cookie": "a=b; spokes_dashboard=\(token)"])) == .allow)
        #expect(access.decide(try request("/api/snapshot", headers: ["Authorization": "Bearer \(token)"])) == .allow)
    }

    @Test func withoutTheRightTokenTheAnswerIs401AndSaysWhereToFindIt() throws {
        let access = DashboardAccess(secret: secret)
        for denied in [try request("/"), try request("/api/snapshot", headers: ["Cookie": "spokes_dashboard=nope"]),
                       try request("/api/snapshot", headers: ["Authorization": "Bearer \(token.dropLast())"])] {
            guard case .deny(let status, let reason) = access.decide(denied) else {
                Issue.record("\(denied.target) was let in")
                continue
            }
            #expect(status == .unauthorized)
            #expect(reason.contains("?token="))
        }
        guard case .deny(.unauthorized, let reason) = access.decide(try request("/?token=wrong")) else {
            Issue.record("a wrong token in the address was let in")
            return
        }
        #expect(reason.contains("not this cluster's dashboard token"))
    }

    @Test func theStyleAndScriptNeedNoToken() throws {
        #expect(DashboardAccess(secret: secret).decide(try request("/static/dashboard.js")) == .allow)
    }

    @Test func anOpenClusterAnswersOnlyToAddressesAndLocalhost() throws {
        let access = DashboardAccess(secret: nil)
        for host in ["127.0.0.1:8787", "127.0.0.1", "localhost:8787", "LOCALHOST", "[::1]:8787", "192.0.2.7:80"] {
            #expect(access.decide(try request("/", headers: ["Host": host])) == .allow, "\(host)")
        }
        for host in ["evil.example:8787", "localhost.evil.example", "127.0.0.1.evil.example", "1270.0.0.1"] {
            guard case .deny(.forbidden, let reason) = access.decide(try request("/", headers: ["Host": host])) else {
                Issue.record("\(host) was let in")
                continue
            }
            #expect(reason.contains("DNS rebinding"))
        }
        guard case .deny(.forbidden, _) = access.decide(try request("/", headers: [:])) else {
            Issue.record("a request without Host was let in")
            return
        }
    }
}
