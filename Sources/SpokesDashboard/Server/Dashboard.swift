import SpokesCluster
import SpokesHTTP

/// A node's web dashboard: the page, its JSON API and live updates, served over our own
/// HTTP server (``HTTPServer``) on a port of its own.
///
/// It binds loopback unless told otherwise; beyond loopback it needs the cluster's secret
/// (then every request needs the dashboard token) or `allowInsecure`. It only reads: the
/// cluster's state comes from ``ClusterObserver``, which asks every member.
public final class Dashboard: Sendable {
    public let server: HTTPServer
    /// The address to open: `http://host:port/`, with `?token=...` when the cluster has a secret.
    public let url: String

    /// Binds `settings.dashboardHost:dashboardPort` (port 0 picks a free one) for `node`;
    /// `GET /metrics` names `build` in `spokes_build_info`.
    public init(node: ClusterNode, limits: HTTPLimits = HTTPLimits(), build: NodeMetrics.Build = .unknown) throws(DashboardError) {
        let settings = node.settings
        let port = settings.dashboardPort ?? 0
        if settings.secret == nil, !settings.allowInsecure, !SocketAddress(host: settings.dashboardHost, port: 0).isLoopback {
            throw .insecureAddress(host: settings.dashboardHost)
        }
        let observer = ClusterObserver(node: node)
        let router = DashboardRouter(observer: observer, feed: SnapshotFeed(observer: observer), access: DashboardAccess(secret: settings.secret), build: build)
        do {
            server = try HTTPServer(host: settings.dashboardHost, port: port, limits: limits, network: node.system.runtime.network,
                                  clock: node.system.runtime.clock) { await router.respond(to: $0) }
        } catch {
            throw .cannotListen(address: "\(settings.dashboardHost):\(port)", reason: "\(error)")
        }
        url = "http://\(server.address)/" + (settings.secret.map { "?token=\($0.dashboardToken)" } ?? "")
    }

    public func start() {
        server.start()
    }

    /// Stops serving: closes every connection and event stream.
    public func stop() {
        server.stop()
    }
}
