import FoundationEssentials

/// One port of one member, as `spokes doctor` found it: answered, not (with the likely
/// cause), or not checked (with why). A value; ``DoctorReport`` prints a list of them.
struct PortCheck: Sendable, Hashable, Codable {
    /// The ports a node uses (README, "The ports a node uses").
    enum Port: String, Sendable, Hashable, Codable, CaseIterable {
        /// Connections: checked with a handshake.
        case clusterTCP = "cluster TCP"
        /// Probes of silent members, on the cluster port's number: checked with a probe.
        case clusterUDP = "cluster UDP"
        /// Discovery beacons: checked by hearing the member's beacon here.
        case discoveryUDP = "discovery UDP"
        /// The dashboard and `GET /metrics`: checked with `GET /metrics`.
        case dashboardTCP = "dashboard TCP"

        /// `TCP` or `UDP`.
        var transport: String { rawValue.hasSuffix("UDP") ? "UDP" : "TCP" }
    }

    enum Status: String, Sendable, Hashable, Codable {
        case ok
        case failed
        /// Not checked: nothing to check (no dashboard, discovery off) or no way to (the
        /// member's cluster port did not answer, so its dashboard is unknown).
        case skipped
    }

    var member: String
    var port: Port
    /// Where it was checked, `host:port`; empty when not known.
    var address: String
    var status: Status
    /// What answered (`handshake in 3 ms`), or what failed and its likely cause, or why
    /// it was not checked.
    var detail: String

    static func ok(_ member: String, _ port: Port, _ address: String, _ detail: String) -> PortCheck {
        PortCheck(member: member, port: port, address: address, status: .ok, detail: detail)
    }

    static func failed(_ member: String, _ port: Port, _ address: String, _ detail: String) -> PortCheck {
        PortCheck(member: member, port: port, address: address, status: .failed, detail: detail)
    }

    static func skipped(_ member: String, _ port: Port, _ address: String, _ detail: String) -> PortCheck {
        PortCheck(member: member, port: port, address: address, status: .skipped, detail: detail)
    }

    /// `cluster UDP 7000`: the port and its number (from ``address``), or the port alone
    /// when its address is not known.
    var portLabel: String {
        guard let number = address.split(separator: ":").last, !address.isEmpty else { return port.rawValue }
        return "\(port.rawValue) \(number)"
    }

    /// The words for silence on this port within `seconds`: what a firewall does.
    static func silence(on port: Port, _ address: String, seconds: Double) -> String {
        let number = address.split(separator: ":").last.map(String.init) ?? "?"
        let within = "within \(seconds.compactDescription) s"
        switch port {
        case .clusterTCP, .dashboardTCP:
            return "no answer on TCP \(number) \(within): a firewall may drop TCP \(number), or the host is down"
        case .clusterUDP:
            return "no answer on UDP \(number) \(within): a firewall may drop UDP \(number) (without probes, members are judged on heartbeats alone)"
        case .discoveryUDP:
            return "no beacon heard \(within) on UDP \(number): a firewall (here or there) may drop UDP \(number) or broadcasts, or the member's discovery is off or uses another port or broadcast address"
        }
    }
}

/// What `spokes doctor` prints: every member's ports, one line each, and a last line
/// that counts them; or the same as JSON. Pure.
struct DoctorReport: Sendable, Hashable, Codable {
    /// The node the client joined and asked for the member list.
    var askedNode: String
    var checks: [PortCheck]

    var failed: Int { checks.count { $0.status == .failed } }
    /// 0 when no check failed, else 1.
    var exitStatus: Int32 { failed == 0 ? 0 : 1 }

    /// One line per member and port, then the count.
    var text: String {
        let rows = checks.map { check in
            [check.member, check.portLabel, check.address.isEmpty ? "-" : check.address,
             check.status == .ok ? "ok: \(check.detail)" : "\(check.status.rawValue.uppercased()): \(check.detail)"]
        }
        let members = Set(checks.map(\.member)).count
        let skipped = checks.count { $0.status == .skipped }
        let summary = "doctor: \(members) \(members == 1 ? "member" : "members") (as \(askedNode) lists them), \(checks.count) checks: "
            + "\(checks.count - failed - skipped) ok, \(failed) failed, \(skipped) skipped\n"
        return NodeClient.table(["MEMBER", "PORT", "ADDRESS", "RESULT"], rows) + summary
    }

    /// `{"askedNode": ..., "checks": [{"member", "port", "address", "status", "detail"}], "failed": N}`.
    var json: String {
        struct Body: Encodable {
            var askedNode: String
            var checks: [PortCheck]
            var failed: Int
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = (try? encoder.encode(Body(askedNode: askedNode, checks: checks, failed: failed))) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self) + "\n"

    }
}
