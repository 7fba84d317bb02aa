import SpokesCluster
import SpokesClusterTestKit
import SpokesTestKit
import Synchronization
import Testing
@testable import SpokesCLI

/// `spokes doctor` on the simulated network in virtual time: whole nodes, a firewall
/// that drops UDP to one port, a member cut off, one on another discovery port, and
/// dashboards that answer or not.
@Suite(.simulated, .hangGuard)
struct ClusterDoctorTests {
    /// The doctor's checks of `cluster`, asked of node 0 from a host of its own.
    private func examine(_ cluster: SimulatedCluster, timeout: Double = 2, host: (String, Runtime)? = nil) async throws -> DoctorReport {
        let (name, runtime) = host ?? cluster.newHost()
        let settings = SimulatedCluster.settings(named: "doctor", host: name)
        let client = try ClusterSystem(settings: settings, isMember: false, runtime: runtime)
        defer { client.shutdown() }
        let doctor = ClusterDoctor(settings: settings, timeout: timeout, runtime: runtime)
        let entry = cluster[0].system.address
        return try await cluster.complete("the doctor examines the cluster", within: 30) {
            try await doctor.examine(entry: entry, client: client)
        }
    }

    private func check(_ report: DoctorReport, _ member: String, _ port: PortCheck.Port) -> PortCheck? {
        report.checks.first { $0.member == member && $0.port == port }
    }

    @Test func everyPortOfEveryMemberOfAHealthyClusterAnswers() async throws {
        let cluster = try SimulatedCluster(3)
        defer { cluster.stop() }
        try await cluster.awaitMesh()
        let report = try await examine(cluster)
        #expect(report.checks.map(\.member) == ["n0", "n0", "n0", "n0", "n1", "n1", "n1", "n1", "n2", "n2", "n2", "n2"])
        #expect(report.checks.map(\.port) == Array(repeating: PortCheck.Port.allCases, count: 3).flatMap { $0 })
        let notOK = report.checks.filter { $0.status != .ok && $0.port != .dashboardTCP }
        #expect(notOK.isEmpty, "\(notOK)")
        #expect(report.checks.filter { $0.port == .dashboardTCP }.allSatisfy { $0.status == .skipped && $0.detail.contains("serves no dashboard") })
        #expect(check(report, "n1", .clusterUDP)?.address == "127.0.0.2:7000")
        #expect(check(report, "n2", .discoveryUDP)?.address == "127.0.0.3:7001")
        #expect(report.exitStatus == 0 && report.failed == 0)
        #expect(report.text.contains("n1      cluster UDP 7000    127.0.0.2:7000  ok: probe answered in"), "\(report.text)")
        #expect(report.text.contains("n2      dashboard TCP       -               SKIPPED: serves no dashboard (dashboard.port is off)\n"), "\(report.text)")
        #expect(report.text.hasSuffix("doctor: 3 members (as n0 lists them), 12 checks: 9 ok, 0 failed, 3 skipped\n"), "\(report.text)")
    }

    @Test func aFirewallThatDropsUDPToOneMembersClusterPortIsNamedAndFailsTheRun() async throws {
        let cluster = try SimulatedCluster(3)
        defer { cluster.stop() }
        try await cluster.awaitMesh()
        cluster.network.dropDatagrams(to: SimulatedCluster.host(1), port: 7000)
        let report = try await examine(cluster)
        let blocked = try #require(check(report, "n1", .clusterUDP))
        #expect(blocked.status == .failed)
        #expect(blocked.detail.hasPrefix("no answer on UDP 7000 within 2 s: a firewall may drop UDP 7000"), "\(blocked.detail)")
        #expect(report.failed == 1 && report.exitStatus == 1, "only that port: \(report.checks.filter { $0.status == .failed })")
        #expect(check(report, "n1", .clusterTCP)?.status == .ok, "TCP to the same number still passes")
        #expect(report.text.contains("FAILED: no answer on UDP 7000 within 2 s: a firewall may drop UDP 7000"))
        #expect(report.json.contains("\"status\" : \"failed\""), "\(report.json)")
    }

    @Test func aMemberCutOffFromThisMachineAndOneOnAnotherDiscoveryPortAreNamed() async throws {
        let cluster = try SimulatedCluster(3, configure: { index, settings in
            if index == 2 {
                settings.discoveryPort = 7002
                settings.peers = ["\(SimulatedCluster.host(0)):7000"]
            }
        })
        defer { cluster.stop() }
        try await cluster.awaitMesh()
        let doctorHost = cluster.newHost()
        cluster.network.cut(between: doctorHost.host, and: SimulatedCluster.host(1))
        let report = try await examine(cluster, host: doctorHost)
        #expect(check(report, "n1", .clusterTCP)?.detail.hasPrefix("no answer on TCP 7000 within 2 s: a firewall may drop TCP 7000") == true,
                "\(String(describing: check(report, "n1", .clusterTCP)))")
        #expect(check(report, "n1", .clusterUDP)?.status == .failed)
        #expect(check(report, "n1", .discoveryUDP)?.status == .failed)
        #expect(check(report, "n1", .dashboardTCP)?.status == .skipped)
        let discovery = try #require(check(report, "n2", .discoveryUDP))
        #expect(discovery.status == .failed && discovery.detail.hasPrefix("no beacon heard within 2 s on UDP 7001"), "\(discovery)")
        #expect(check(report, "n2", .clusterUDP)?.status == .ok && check(report, "n0", .discoveryUDP)?.status == .ok)
        #expect(report.failed == 4)
    }

    @Test func aDashboardThatAnswersIsOKAndOneWhereNothingListensIsRefused() async throws {
        let cluster = try SimulatedCluster(2)
        defer { cluster.stop() }
        try await cluster.awaitMesh()
        // A stand-in for a dashboard on a host of its own: 200 to any request.
        let (web, runtime) = cluster.newHost()
        let listener = try runtime.network.listen(on: SocketAddress(host: web, port: 8787))
        defer { listener.stop() }
        let requests = Mutex<[String]>([])
        listener.start { stream in
            let seen = Mutex<[UInt8]>([])
            stream.startReading(onBytes: { chunk in
                let text = seen.withLock { $0 += chunk; return String(decoding: $0, as: UTF8.self) }
                guard text.hasSuffix("\r\n\r\n") else { return true }
                requests.withLock { $0.append(text) }
                _ = stream.write(Array("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".utf8))
                stream.shutdown()
                return false
            }, onEnd: { _ in stream.close() })
        }
        cluster[0].dashboard = "http://\(web):8787/"
        cluster[1].dashboard = "http://\(web):8788/"
        let report = try await examine(cluster)
        #expect(check(report, "n0", .dashboardTCP) == .ok("n0", .dashboardTCP, "\(web):8787", "GET /metrics answered 200"))
        #expect(check(report, "n1", .dashboardTCP) == .failed("n1", .dashboardTCP, "\(web):8788", "connection refused on TCP 8788: nothing listens there"))
        #expect(requests.withLock { $0 }.first?.hasPrefix("GET /metrics HTTP/1.1\r\nHost: \(web):8787\r\n") == true, "\(requests.withLock { $0 })")
    }
}
