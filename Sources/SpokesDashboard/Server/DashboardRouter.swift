import FoundationEssentials
import SpokesBikes
import SpokesCluster
import SpokesHTTP

/// Answers the dashboard's requests: the page and its two static files, the JSON API
/// under `/api/`, the event stream, and each bike job's HTML report.
///
/// | path | answer |
/// |---|---|
/// | `/` | the page |
/// | `/static/dashboard.css`, `/static/dashboard.js` | its style and script |
/// | `/api/snapshot` | ``DashboardSnapshot``: everything at once |
/// | `/api/events` | Server-Sent Events: a `snapshot` event twice a second |
/// | `/api/members` | `{"node", "members": [MemberView]}` |
/// | `/api/jobs` | `{"jobs": [JobView]}` |
/// | `/api/tasks` | `{"time", "tasks": [TaskSpanView]}` |
/// | `/api/jobs/{id}` | one ``JobView`` |
/// | `/api/jobs/{id}/stations` | ``StationsView`` of a bike job |
/// | `/api/jobs/{id}/report` | a finished bike job's ``SimulationReport`` |
/// | `/jobs/{id}/report.html` | that report as a self-contained page |
/// | `/metrics` | this node's ``NodeMetrics`` in the Prometheus text format |
///
/// Only `GET` and `HEAD`: the dashboard watches, it changes nothing.
struct DashboardRouter: Sendable {
    let observer: ClusterObserver
    let feed: SnapshotFeed
    let access: DashboardAccess
    /// The build `/metrics` names in `spokes_build_info`.
    var build = NodeMetrics.Build.unknown

    /// What every answer carries: no framing by other sites, no sniffing, and the page's
    /// own content policy (nothing from anywhere else).
    static let pagePolicy = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

    func respond(to request: HTTPRequest) async -> HTTPResponse {
        var response = await route(request)
        response.headers.replaceOrAdd(name: "X-Content-Type-Options", value: "nosniff")
        response.headers.replaceOrAdd(name: "Referrer-Policy", value: "no-referrer")
        if !response.headers.contains("Content-Security-Policy") {
            response.headers.add(name: "Content-Security-Policy", value: Self.pagePolicy)
        }
        if !response.headers.contains("Cache-Control") { response.headers.add(name: "Cache-Control", value: "no-store") }
        return response
    }

    private func route(_ request: HTTPRequest) async -> HTTPResponse {
        guard request.method == .get || request.method == .head else {
            var refused = HTTPResponse.text("the dashboard only answers GET and HEAD\n", status: .methodNotAllowed)
            refused.headers.add(name: "Allow", value: "GET, HEAD")
            return refused
        }
        switch access.decide(request) {
        case .allow:
            break
        case .grant(let cookie, let location):
            var response = HTTPResponse.redirect(to: location)
            response.headers.add(name: "Set-Cookie", value: cookie)
            return response
        case .deny(let status, let reason):
            return request.path.hasPrefix("/api/") || request.path == "/metrics" ? Self.error(reason, status: status) : .html(Self.refusalPage(reason), status: status)
        }
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        switch parts.count {
        case 0:
            return .html(DashboardPage.html)
        case 1 where parts[0] == "metrics":
            return Self.metrics(await NodeMetrics.gather(from: observer.node, build: build))
        case 2 where parts[0] == "static":
            return Self.asset(parts[1])
        case 2 where parts[0] == "api":
            return await api(parts[1])
        case 3 where parts[0] == "api" && parts[1] == "jobs":
            return await job(parts[2])
        case 4 where parts[0] == "api" && parts[1] == "jobs" && parts[3] == "stations":
            guard let stations = await observer.stations(of: parts[2]) else {
                return Self.error("no node knows the stations of job \(parts[2]); only bike jobs have stations", status: .notFound)
            }
            return .json(stations)
        case 4 where parts[0] == "api" && parts[1] == "jobs" && parts[3] == "report":
            guard let report = await observer.report(of: parts[2]) else { return Self.error(Self.noReport(parts[2]), status: .notFound) }
            return .json(report)
        case 3 where parts[0] == "jobs" && parts[2] == "report.html":
            guard let report = await observer.report(of: parts[1]) else {
                return .html(Self.refusalPage(Self.noReport(parts[1])), status: .notFound)
            }
            var response = HTTPResponse.html(JobReportPage.html(report, generatedAt: Date(timeIntervalSince1970: observer.node.system.runtime.unixNow)))
            response.headers.add(name: "Content-Security-Policy", value: JobReportPage.contentSecurityPolicy)
            return response
        default:
            return Self.error("no such page: \(request.path)", status: .notFound)
        }
    }

    private func api(_ name: String) async -> HTTPResponse {
        switch name {
        case "snapshot":
            return .json(bytes: Array(await feed.json(maxAge: 0.25).utf8))
        case "events":
            return .eventStream(feed.stream())
        case "members":
            let snapshot = await observer.snapshot()
            return .json(MembersBody(node: snapshot.node, members: snapshot.members))
        case "jobs":
            return .json(JobsBody(jobs: await observer.snapshot().jobs))
        case "tasks":
            let snapshot = await observer.snapshot()
            return .json(TasksBody(time: snapshot.time, tasks: snapshot.tasks))
        default:
            return Self.error("no such API: /api/\(name)", status: .notFound)
        }
    }

    private func job(_ id: String) async -> HTTPResponse {
        guard let view = await observer.snapshot().jobs.first(where: { $0.id == id }) else {
            return Self.error("no running or recent job \(id) on any member", status: .notFound)
        }
        return .json(view)
    }

    /// This node's metrics for a Prometheus scrape (never cached: each is a new reading).
    static func metrics(_ metrics: NodeMetrics) -> HTTPResponse {
        var response = HTTPResponse.text(metrics.text)
        response.headers.replaceOrAdd(name: "Content-Type", value: PrometheusText.contentType)
        return response
    }

    private static func asset(_ name: String) -> HTTPResponse {
        var response: HTTPResponse
        switch name {
        case "dashboard.css":
            response = .text(DashboardPage.css)
            response.headers.replaceOrAdd(name: "Content-Type", value: "text/css; charset=utf-8")
        case "dashboard.js":
            response = .text(DashboardPage.javascript)
            response.headers.replaceOrAdd(name: "Content-Type", value: "text/javascript; charset=utf-8")
        default:
            return error("no such file: /static/\(name)", status: .notFound)
        }
        response.headers.add(name: "Cache-Control", value: "no-cache")
        return response
    }

    private static func noReport(_ job: String) -> String {
        "no report of job \(job): it is still running, it is not a bike job (batches of other tasks have no report), or no member stored it"
    }

    struct MembersBody: Encodable { var node: String; var members: [MemberView] }
    struct JobsBody: Encodable { var jobs: [JobView] }
    struct TasksBody: Encodable { var time: Double; var tasks: [TaskSpanView] }
    struct ErrorBody: Encodable { var error: String }

    static func error(_ message: String, status: HTTPStatus) -> HTTPResponse {
        .json(ErrorBody(error: message), status: status)
    }

    /// A small page that says why, for people who open an address by hand.
    static func refusalPage(_ reason: String) -> String {
        """
        <!doctype html><html lang="en"><head><meta charset="utf-8"><title>Spokes dashboard</title></head>
        <body><h1>Spokes dashboard</h1><p>\(HTML.escape(reason))</p></body></html>
        """
    }
}
