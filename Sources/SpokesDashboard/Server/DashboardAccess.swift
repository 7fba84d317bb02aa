import SpokesCluster
import SpokesHTTP

/// Who may see a node's dashboard. Sans-IO: a request goes in, a decision comes out.
///
/// - A cluster with a secret asks for its dashboard token (``ClusterSecret/dashboardToken``):
///   as `?token=` once (the answer sets an `HttpOnly`, `SameSite=Strict` cookie and
///   redirects to the same address without the token, so it leaves the address bar and
///   the history), then from the cookie; scripts may send `Authorization: Bearer TOKEN`.
/// - An open cluster (no secret) listens on loopback only, and answers only requests
///   whose `Host` is an IP address or `localhost`: a web page elsewhere cannot reach it
///   through a name it controls (DNS rebinding).
/// - The page's style and script carry no data and are always served.
public struct DashboardAccess: Sendable {
    /// What to do with a request.
    public enum Decision: Sendable, Equatable {
        case allow
        /// The right token came in the query: set the cookie and go to `location`.
        case grant(cookie: String, location: String)
        case deny(HTTPStatus, reason: String)
    }

    /// The cookie that carries the token.
    public static let cookieName = "spokes_dashboard"

    public let secret: ClusterSecret?

    public init(secret: ClusterSecret?) {
        self.secret = secret
    }

    public func decide(_ request: HTTPRequest) -> Decision {
        if request.path.hasPrefix("/static/") { return .allow }
        guard let secret else {
            guard let host = request.headers.first("Host"), Self.isAddressOrLocalhost(host) else {
                return .deny(.forbidden, reason: "this dashboard answers only to an IP address or localhost in the Host header (a guard against DNS rebinding)")
            }
            return .allow
        }
        if let token = request.query("token") {
            guard secret.isDashboardToken(token) else {
                return .deny(.unauthorized, reason: "the token in the address is not this cluster's dashboard token")
            }
            let cookie = "\(Self.cookieName)=\(token); Path=/; HttpOnly; SameSite=Strict"
            return .grant(cookie: cookie, location: Self.withoutToken(request))
        }
        if let cookie = request.cookie(Self.cookieName), secret.isDashboardToken(cookie) { return .allow }
        if let authorization = request.headers.first("Authorization"), authorization.hasPrefix("Bearer "),
           secret.isDashboardToken(String(authorization.dropFirst("Bearer ".count))) {
            return .allow
        }
        return .deny(.unauthorized, reason: "this dashboard needs its token: open the address the node printed (it ends in ?token=...), or ask 'spokes status --to NODE' with the cluster's secret")
    }

    /// The request's path and query without the `token` item, as a path of the
    /// dashboard's own origin, whatever the target: an absolute-form target
    /// (`http://evil.example/x`) loses its scheme and host, and a run of leading slashes or
    /// backslashes (`//evil.example/`, `/\evil.example/`, which a browser would take for
    /// another host) becomes one slash. The redirect never leaves the dashboard.
    static func withoutToken(_ request: HTTPRequest) -> String {
        var target = Substring(request.target)
        if !target.hasPrefix("/"), let scheme = target.firstRange(of: "://") {
            let authorityAndRest = target[scheme.upperBound...]
            target = authorityAndRest.firstIndex { $0 == "/" || $0 == "?" }.map { authorityAndRest[$0...] } ?? ""
        }
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let path = "/" + (parts.first ?? "").drop { $0 == "/" || $0 == "\\" }
        let kept = parts.dropFirst().first?.split(separator: "&").filter { !$0.hasPrefix("token=") && $0 != "token" } ?? []
        return kept.isEmpty ? path : path + "?" + kept.joined(separator: "&")
    }

    /// `127.0.0.1:8787`, `[::1]:8787`, `localhost:8787` (port optional).
    static func isAddressOrLocalhost(_ host: String) -> Bool {
        var name = Substring(host.lowercased())
        if name.hasPrefix("[") { return name.contains("]") }
        if let colon = name.lastIndex(of: ":") { name = name[..<colon] }
        if name == "localhost" { return true }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isNumber) && Int(part)! <= 255 }
    }
}
