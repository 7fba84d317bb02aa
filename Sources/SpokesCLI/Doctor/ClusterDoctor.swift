import FoundationEssentials
import Glibc
import SpokesCluster
import SpokesConcurrency

/// What `spokes doctor` does from one machine: joins a node as a client, takes its member
/// list, and checks every member's ports at once, each check bounded by `timeout`
/// seconds on `runtime`'s clock:
///
/// - cluster TCP: a handshake with the member at its address (the one it advertises),
///   which must be the member named;
/// - cluster UDP: a sealed probe to the same address and port number (``ProbeCheck``),
///   answered by that member;
/// - discovery UDP (where discovery is on): the member's beacon heard here, after a
///   query nodes answer at once (``NodeFinder/beacons(settings:expecting:timeout:runtime:)``);
/// - dashboard TCP (where the member serves one): `GET /metrics` with the dashboard
///   token (``MetricsRequest``). Where a member serves it is what the member itself says
///   (its own line of ``NodeStatus/members()``), so it is asked once its handshake passed.
///
/// Members that left are not checked. The ports' numbers are no guess: each comes from the
/// member (its address, its dashboard) or from the cluster's settings (the discovery port).
struct ClusterDoctor {
    var settings: ClusterSettings
    /// Seconds each check waits at most.
    var timeout: Double
    var runtime: Runtime

    /// Every member's checks, as `client` (a client system on `runtime`) finds them from
    /// the node at `entry`. Throws when that node cannot be joined or asked for its members.
    func examine(entry: SocketAddress, client: ClusterSystem) async throws -> DoctorReport {
        let started = runtime.now
        let peer = try await NodeClient.join(entry, with: client)
        let entryHandshake = "handshake in \(Int(((runtime.now - started) * 1000).rounded())) ms (the node asked)"
        let status = try NodeStatus.resolve(id: ActorID(node: peer.node, name: NodeStatus.wellKnownName), using: client)
        let listed = try await withTimeout(seconds: timeout, clock: runtime.clock) { try await status.members() }
        let members = listed.filter { $0.state != Member.State.left.rawValue }
        // The cluster of the node joined (a client given --to and no cluster joins any):
        // its members' beacons name it.
        var joined = self
        joined.settings.cluster = peer.cluster
        let doctor = joined
        async let heard = doctor.beacons(expecting: Set(members.map(\.name)))
        let checked = await withTaskGroup(of: (String, [PortCheck]).self) { group in
            for (index, member) in members.enumerated() {
                group.addTask {
                    // The asked node is the first of its own list, already joined.
                    let joined = index == 0 && member.name == peer.node.name
                    return (member.name, await doctor.check(member, joined: joined ? (member, entryHandshake) : nil, client: client))
                }
            }
            var checks: [String: [PortCheck]] = [:]
            for await (name, list) in group { checks[name] = list }
            return checks
        }
        let beacons = await heard
        var checks: [PortCheck] = []
        for member in members {
            let own = checked[member.name] ?? []
            checks += own.prefix(2)
            checks.append(discoveryCheck(member, heard: beacons))
            checks += own.dropFirst(2)
        }
        return DoctorReport(askedNode: peer.node.name, checks: checks)
    }

    /// A member's cluster TCP, cluster UDP and dashboard checks, in that order. `joined`
    /// is its own status line and how its handshake went when the client joined it already.
    private func check(_ member: MemberStatus, joined: (status: MemberStatus, handshake: String)?, client: ClusterSystem) async -> [PortCheck] {
        async let probe = probeCheck(member)
        let tcp: PortCheck
        let own: MemberStatus?
        if let joined {
            (tcp, own) = (PortCheck.ok(member.name, .clusterTCP, member.address, joined.handshake), joined.status)
        } else {
            (tcp, own) = await handshakeCheck(member, client: client)
        }
        let dashboard: PortCheck
        if tcp.status != .ok {
            dashboard = .skipped(member.name, .dashboardTCP, "", "not known: its cluster TCP port did not answer, and the member says where its dashboard is")
        } else if let url = own?.dashboard {
            dashboard = await dashboardCheck(member, url: url)
        } else {
            dashboard = .skipped(member.name, .dashboardTCP, "", "serves no dashboard (dashboard.port is off)")
        }
        return [tcp, await probe, dashboard]
    }

    private func handshakeCheck(_ member: MemberStatus, client: ClusterSystem) async -> (PortCheck, MemberStatus?) {
        func failed(_ detail: String) -> (PortCheck, MemberStatus?) { (.failed(member.name, .clusterTCP, member.address, detail), nil) }
        let address: SocketAddress
        do {
            address = try SocketAddress(parsing: member.address)
        } catch {
            return failed("its address cannot be dialled: \(error)")
        }
        let started = runtime.now
        let peer: WireMessage.Handshake
        do {
            peer = try await withTimeout(seconds: timeout, clock: runtime.clock) { try await NodeClient.join(address, with: client) }
        } catch is TimeoutError {
            return failed(PortCheck.silence(on: .clusterTCP, member.address, seconds: timeout))
        } catch TransportError.connectTimedOut {
            return failed(PortCheck.silence(on: .clusterTCP, member.address, seconds: timeout))
        } catch TransportError.socketFailed(_, _, let code) where code == ECONNREFUSED {
            return failed("connection refused on TCP \(address.port): nothing listens there (the node stopped, or the address it advertises is wrong)")
        } catch RemoteCallError.unreachable(_, let reason) where reason.hasPrefix("no handshake") {
            return failed("TCP \(address.port) took the connection but \(reason): something else listens there, or a middlebox holds the bytes")
        } catch {
            return failed("\(error)")
        }
        guard peer.node.name == member.name else {
            return failed("another node answers at \(member.address): \(peer.node.name) (two nodes advertise one address, or the member list is out of date)")
        }
        let milliseconds = Int(((runtime.now - started) * 1000).rounded())
        let status = try? NodeStatus.resolve(id: ActorID(node: peer.node, name: NodeStatus.wellKnownName), using: client)
        let own = try? await withTimeout(seconds: timeout, clock: runtime.clock) { try await status?.members().first }
        return (.ok(member.name, .clusterTCP, member.address, "handshake in \(milliseconds) ms"), own ?? nil)
    }

    private func probeCheck(_ member: MemberStatus) async -> PortCheck {
        guard let address = try? SocketAddress(parsing: member.address) else {
            return .failed(member.name, .clusterUDP, member.address, "its address cannot be probed: '\(member.address)'")
        }
        let started = runtime.now
        let answer: String?
        do {
            answer = try await ProbeCheck.ask(address, keyring: settings.keyring, timeout: timeout, runtime: runtime)
        } catch {
            return .failed(member.name, .clusterUDP, member.address, "no UDP port to probe from here: \(error)")
        }
        guard let answer else { return .failed(member.name, .clusterUDP, member.address, PortCheck.silence(on: .clusterUDP, member.address, seconds: timeout)) }
        guard answer == member.name else {
            return .failed(member.name, .clusterUDP, member.address, "another node answers probes at \(member.address): \(answer)")
        }
        return .ok(member.name, .clusterUDP, member.address, "probe answered in \(Int(((runtime.now - started) * 1000).rounded())) ms")
    }

    /// The beacons heard here, by node name, or why none could be.
    private func beacons(expecting names: Set<String>) async -> Result<[String: Beacon], NoBeacons> {
        guard settings.discoveryMode != .off else { return .failure(.off) }
        do {
            return .success(try await NodeFinder.beacons(settings: settings, expecting: names, timeout: timeout, runtime: runtime))
        } catch {
            return .failure(.cannotListen("\(error)"))
        }
    }

    /// Why no beacon could be heard at all.
    private enum NoBeacons: Error {
        case off
        case cannotListen(String)
    }

    private func discoveryCheck(_ member: MemberStatus, heard: Result<[String: Beacon], NoBeacons>) -> PortCheck {
        let host = (try? SocketAddress(parsing: member.address))?.host ?? member.address
        let address = "\(host):\(settings.discoveryPort)"
        switch heard {
        case .failure(.off):
            return .skipped(member.name, .discoveryUDP, address, "discovery is off in this client's settings (discovery: off)")
        case .failure(.cannotListen(let reason)):
            return .failed(member.name, .discoveryUDP, address, "cannot listen for beacons here: \(reason)")
        case .success(let beacons):
            guard let beacon = beacons[member.name] else {
                return .failed(member.name, .discoveryUDP, address, PortCheck.silence(on: .discoveryUDP, address, seconds: timeout))
            }
            guard beacon.address == member.address else {
                return .failed(member.name, .discoveryUDP, address, "its beacon names \(beacon.address), its member list \(member.address)")
            }
            return .ok(member.name, .discoveryUDP, address, "beacon heard here")
        }
    }

    private func dashboardCheck(_ member: MemberStatus, url: String) async -> PortCheck {
        var authority = url
        if authority.hasPrefix("http://") { authority.removeFirst("http://".count) }
        while authority.hasSuffix("/") { authority.removeLast() }
        guard var address = try? SocketAddress(parsing: authority) else {
            return .failed(member.name, .dashboardTCP, url, "its dashboard's address cannot be read: '\(url)'")
        }
        let memberHost = (try? SocketAddress(parsing: member.address))?.host ?? ""
        if address.host == "0.0.0.0" { address = SocketAddress(host: memberHost, port: address.port) }
        if address.host.hasPrefix("127."), !memberHost.hasPrefix("127.") {
            return .skipped(member.name, .dashboardTCP, address.description,
                            "listens on \(address.host) only (dashboard.host): no other machine can reach it")
        }
        let where_ = address.description
        switch await MetricsRequest.status(of: address, token: settings.secret?.dashboardToken, timeout: timeout, runtime: runtime) {
        case .success(200):
            return .ok(member.name, .dashboardTCP, where_, "GET /metrics answered 200")
        case .success(401):
            return .failed(member.name, .dashboardTCP, where_, "GET /metrics answered 401: the dashboard token did not open it (this client holds another secret?)")
        case .success(let code):
            return .failed(member.name, .dashboardTCP, where_, "GET /metrics answered \(code)")
        case .failure(.refused):
            return .failed(member.name, .dashboardTCP, where_, "connection refused on TCP \(address.port): nothing listens there")
        case .failure(.silent):
            return .failed(member.name, .dashboardTCP, where_, PortCheck.silence(on: .dashboardTCP, where_, seconds: timeout))
        case .failure(.broken(let reason)):
            return .failed(member.name, .dashboardTCP, where_, "GET /metrics: \(reason)")
        }
    }
}
