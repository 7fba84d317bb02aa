import SpokesConcurrency
import Distributed
import Foundation
import SpokesTestKit
import Testing
@testable import SpokesCluster

/// Throws hostile input at a live node's TCP and UDP ports, in seeded batches bounded in
/// count and time. After each batch the node must still answer `status`, an honest
/// client's calls must still work, its connections must return to the baseline, and the
/// batch must show up in the right `rejected` counters.
@Suite(.processLane, .timeLimit(.minutes(2)), .serialized)
struct HostileInputTests {
    static let secret = try! ClusterSecret("hostile-input-test-secret", source: "test")

    /// A started node with a secret, on loopback, with a handshake deadline of 2 s: short
    /// for the deadline tests, long enough for an honest client on a loaded machine.
    final class Target: Sendable {
        let node: ClusterNode
        let client: ClusterSystem
        let baselineConnections: Int
        let baselineResidentBytes: Int

        init(configure: (inout ClusterSettings) -> Void = { _ in }) async throws {
            var settings = ClusterSettings()
            settings.cluster = "hostile-\(UUID().uuidString.prefix(8))"
            settings.nodeName = "target"
            settings.secret = HostileInputTests.secret
            settings.discoveryPort = TestPorts.discovery()
            settings.handshakeTimeout = 2
            configure(&settings)
            node = try ClusterNode(settings: settings)
            node.start()
            var clientSettings = settings
            clientSettings.nodeName = "honest-client"
            clientSettings.discoveryMode = .off
            client = try ClusterSystem(settings: clientSettings, isMember: false)
            try await client.join(node.system.address)
            baselineConnections = node.system.openConnectionCount
            baselineResidentBytes = Self.residentBytes()
        }

        /// This process's resident memory, from /proc/self/statm.
        static func residentBytes() -> Int {
            let text = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
            let pages = text.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
            return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
        }

        var address: SocketAddress { node.system.address }
        var rejections: RejectionCounters { node.system.rejections }
        var cluster: String { node.settings.cluster }

        /// The node answers status and ping over the honest client's connection, and is
        /// back to its baseline of open connections.
        func expectHealthy(after batch: String) async throws {
            let status = try NodeStatus.resolve(id: ActorID(node: node.system.node, name: NodeStatus.wellKnownName), using: client)
            let members = try await status.members()
            #expect(members.first?.name == "target", "status after \(batch)")
            #expect(try await status.ping() == "target", "ping after \(batch)")
            // Closing is asynchronous (reader threads notice EOF): bounded wait, no event to await.
            let deadline = RealClock().now + 5
            while node.system.openConnectionCount > baselineConnections, RealClock().now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(node.system.openConnectionCount == baselineConnections, "connections left open after \(batch)")
            // Generous (other suites run in this process too), but a node that kept what
            // hostile peers sent would pass it.
            let grown = Self.residentBytes() - baselineResidentBytes
            #expect(grown < 256 << 20, "resident memory grew by \(grown >> 20) MiB after \(batch)")
        }

        /// Another honest client (or member), joined to the node.
        func join(asMember: Bool = false) async throws -> ClusterSystem {
            var settings = node.settings
            settings.nodeName = asMember ? "honest-member" : "another-client"
            settings.discoveryMode = .off
            let system = try ClusterSystem(settings: settings, isMember: asMember)
            do {
                try await system.join(address)
            } catch {
                system.shutdown()
                throw error
            }
            return system
        }

        func stop() {
            client.shutdown()
            node.stop()
        }
    }

    @Test func randomBytesAndBrokenFramesCloseOnlyTheirConnection() async throws {
        let target = try await Target()
        defer { target.stop() }
        var generator = TestGenerator(seed: 1)
        for _ in 0..<40 {
            let peer = try await RawPeer.connect(to: target.address)
            let bytes = (0..<Int.random(in: 1...3000, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            await peer.send(bytes)
            #expect(await peer.closedByNode(), "random bytes left the connection open")
            peer.close()
        }
        // A truncated frame: the length promises more than ever comes; the handshake deadline ends it.
        let truncated = try await RawPeer.connect(to: target.address)
        await truncated.send([0, 0, 0, 100] + Array("{\"type\":".utf8))
        #expect(await truncated.closedByNode(within: 8))
        truncated.close()
        // An oversized frame: refused as soon as its length is read.
        let oversized = try await RawPeer.connect(to: target.address)
        await oversized.send([0x7F, 0xFF, 0xFF, 0xFF, 1, 2, 3])
        #expect(await oversized.closedByNode())
        oversized.close()
        #expect(target.rejections[.frameTooLarge] >= 1)
        #expect(target.rejections[.malformedFrame] + target.rejections[.frameTooLarge] + target.rejections[.handshakeTimeout] >= 30)
        try await target.expectHealthy(after: "random bytes")
    }

    @Test func malformedMessagesBeforeTheHandshakeAreCountedByKind() async throws {
        let target = try await Target()
        defer { target.stop() }
        let node = NodeID(name: "x", incarnation: 1)
        let cases: [(String, [UInt8], Rejection)] = [
            ("invalid UTF-8", Array(#"{"type":"hello","body":{"cluster":""#.utf8) + [0xFF, 0xFE, 0xC0] + Array(#""}}"#.utf8), .malformedFrame),
            ("deep nesting", Array(String(repeating: "[", count: 5000).utf8), .jsonTooDeep),
            ("long array", Array(("[" + String(repeating: "0,", count: 200_000) + "0]").utf8), .frameTooLarge),
            ("wrong field type", Array(#"{"type":"hello","body":{"protocolVersion":"two"}}"#.utf8), .malformedFrame),
            ("not an object", Array("42".utf8), .malformedFrame),
            ("call before the handshake", Array(try JSONEncoder().encode(WireMessage.call(.init(
                id: 1, recipient: ActorID(node: node, name: "status"), target: "x", genericSubstitutions: [], arguments: [])))), .messageBeforeHandshake),
            ("heartbeat before the handshake", Array(try JSONEncoder().encode(WireMessage.heartbeat(.init(sequence: 1)))), .messageBeforeHandshake),
            ("proof before hello", Array(try JSONEncoder().encode(WireMessage.proof(.init(tag: "00")))), .messageBeforeHandshake),
        ]
        for (name, payload, rejection) in cases {
            let before = target.rejections[rejection]
            let peer = try await RawPeer.connect(to: target.address)
            await peer.sendFrame(payload)
            #expect(await peer.closedByNode(), "\(name) left the connection open")
            peer.close()
            #expect(target.rejections[rejection] == before + 1, "\(name) counted as \(rejection)")
        }
        try await target.expectHealthy(after: "malformed messages")
    }

    @Test func aPeerWithoutTheSecretIsNeverAdmitted() async throws {
        let target = try await Target()
        defer { target.stop() }
        // No secret at all: refused at hello.
        let open = try await RawPeer.connect(to: target.address)
        await open.sendFrame(.hello(.init(cluster: target.cluster, node: NodeID(name: "intruder", incarnation: 1), address: "", slots: 0,
                                          authenticated: false, nonce: HandshakeAuthentication.makeNonce())))
        guard case .refused(let refusal)? = await open.readMessage() else {
            Issue.record("an open peer was not refused")
            return
        }
        #expect(refusal.reason.contains("requires its secret"))
        open.close()
        // A wrong secret: its hello does not open, and the node says so, in clear, and closes.
        let wrong = try await RawPeer.connect(to: target.address)
        let wrongSecret = try ClusterSecret("not-the-cluster-secret", source: "test")
        await wrong.sendHandshakeFrame(.hello(.init(cluster: target.cluster, node: NodeID(name: "wrong", incarnation: 1), address: "", slots: 0,
                                                    authenticated: true, nonce: HandshakeAuthentication.makeNonce())), secret: wrongSecret)
        guard case .refused(let told)? = await wrong.readHandshakeMessage(secret: wrongSecret) else {
            Issue.record("a peer with another secret was not told why")
            return
        }
        #expect(told.reason.contains("different secrets"), "\(told.reason)")
        #expect(await wrong.closedByNode())
        wrong.close()
        // A peer that takes the node's proof and hangs up, as a node with another secret does.
        let quitter = try await RawPeer.connect(to: target.address)
        await quitter.sendHandshakeFrame(.hello(.init(cluster: target.cluster, node: NodeID(name: "quitter", incarnation: 1), address: "", slots: 0,
                                                      authenticated: true, nonce: HandshakeAuthentication.makeNonce())), secret: Self.secret)
        guard case .welcome? = await quitter.readHandshakeMessage(secret: Self.secret) else {
            Issue.record("no welcome for a hello with the secret flag")
            return
        }
        quitter.close()
        let deadline = RealClock().now + 3
        while target.rejections[.handshakeAbandoned] == 0, RealClock().now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(target.rejections[.handshakeAbandoned] == 1)
        #expect(target.rejections[.authenticationFailed] == 1)
        #expect(target.rejections[.handshakeRefused] == 1)
        #expect(target.node.members.isEmpty, "no intruder became a member")
        try await target.expectHealthy(after: "intruders")
    }

    @Test func aSilentOrDribblingConnectionIsClosedAtTheHandshakeDeadline() async throws {
        let target = try await Target()
        defer { target.stop() }
        let silent = try await RawPeer.connect(to: target.address)
        let dribbling = try await RawPeer.connect(to: target.address)
        let hello = Array(try JSONEncoder().encode(WireMessage.hello(.init(
            cluster: target.cluster, node: NodeID(name: "slow", incarnation: 1), address: "", slots: 0, authenticated: true,
            nonce: HandshakeAuthentication.makeNonce()))))
        let frame = FrameDecoder.frame(hello)
        // Eight bytes 50 ms apart, then nothing: the hello never completes before the 2 s deadline.
        for byte in frame.prefix(8) {
            await dribbling.send([byte])
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(await silent.closedByNode(within: 8))
        #expect(await dribbling.closedByNode(within: 8))
        silent.close()
        dribbling.close()
        #expect(target.rejections[.handshakeTimeout] == 2)
        try await target.expectHealthy(after: "slow connections")
    }

    @Test func forgedReplayedAndUnknownFramesInASession() async throws {
        let target = try await Target()
        defer { target.stop() }
        let status = ActorID(node: target.node.system.node, name: NodeStatus.wellKnownName)

        // A frame with a bad tag ends the session.
        let forger = try await RawPeer.connect(to: target.address)
        let forging = try #require(await forger.handshake(cluster: target.cluster, secret: Self.secret, name: "forger"), "the honest handshake failed")
        var forged = forging.seal(.heartbeat(.init(sequence: 1)))
        forged[forged.count - 1] ^= 0x55
        await forger.sendFrame(forged)
        #expect(await forger.closedByNode())
        forger.close()
        #expect(target.rejections[.frameAuthenticationFailed] == 1)

        // The same sealed frame twice: the second is a replay.
        let replayer = try await RawPeer.connect(to: target.address)
        let replaying = try #require(await replayer.handshake(cluster: target.cluster, secret: Self.secret, name: "replayer"), "the honest handshake failed")
        let beat = replaying.seal(.heartbeat(.init(sequence: 10)))
        await replayer.sendFrame(beat)
        #expect(await replaying.read() == .heartbeatAck(.init(sequence: 10)))
        await replayer.sendFrame(beat)
        #expect(await replayer.closedByNode())
        replayer.close()
        #expect(target.rejections[.frameAuthenticationFailed] == 2)

        // Authenticated but unknown: an unknown type, an unknown actor, a garbage target,
        // an unknown task kind. Each gets an error reply and the session stays open.
        let member = try await RawPeer.connect(to: target.address)
        let session = try #require(await member.handshake(cluster: target.cluster, secret: Self.secret, name: "odd-member"), "the honest handshake failed")
        await session.send(.unknown(type: "teleport"))
        guard case .unsupported(let refusal)? = await session.read() else {
            Issue.record("no answer to an unknown message type")
            return
        }
        #expect(refusal.reason.contains("teleport"))
        await session.send(.call(.init(id: 1, recipient: ActorID(node: target.node.system.node, name: "ghost"), target: "x",
                                       genericSubstitutions: [], arguments: [])))
        guard case .reply(let reply)? = await session.read(), case .error(let type, _) = reply.outcome else {
            Issue.record("no error reply for an unknown actor")
            return
        }
        #expect(type == "ActorNotFound")
        var generator = TestGenerator(seed: 7)
        for id in 2..<40 {
            let length = Int.random(in: 0...80, using: &generator)
            let junk = String((0..<length).map { _ in Character(UnicodeScalar(UInt8.random(in: 1...127, using: &generator))) })
            let target = id.isMultiple(of: 2) ? junk : Self.membersTarget.prefix(length) + junk
            await session.send(.call(.init(id: UInt64(id), recipient: status, target: String(target),
                                           genericSubstitutions: id.isMultiple(of: 3) ? [junk] : [], arguments: [junk])))
            guard case .reply(let reply)? = await session.read(), reply.id == UInt64(id), case .error = reply.outcome else {
                Issue.record("call \(id) with a junk target got no error reply")
                return
            }
        }
        // The real name is answered, so the mutations above started from a real name.
        await session.send(.call(.init(id: 100, recipient: status, target: Self.membersTarget, genericSubstitutions: [], arguments: [])))
        guard case .reply(let good)? = await session.read(), case .value = good.outcome else {
            Issue.record("\(Self.membersTarget) is not NodeStatus.members() any more: update membersTarget")
            return
        }
        // A real function of another actor type: refused, never run on this actor.
        await session.send(.call(.init(id: 103, recipient: status, target: Self.workerCountTarget, genericSubstitutions: [], arguments: [])))
        guard case .reply(let misdirected)? = await session.read(), case .error(_, let misdirectedMessage) = misdirected.outcome else {
            Issue.record("no error reply for a function of another actor type")
            return
        }
        #expect(misdirectedMessage.contains("has no function"))
        // ... which is a function of the worker's.
        let workerID = ActorID(node: target.node.system.node, name: ScanSystem.wellKnownName)
        await session.send(.call(.init(id: 104, recipient: workerID, target: Self.workerCountTarget, genericSubstitutions: [], arguments: [])))
        guard case .reply(let counted)? = await session.read(), case .value = counted.outcome else {
            Issue.record("\(Self.workerCountTarget) is not ScanSystem.count() any more: update workerCountTarget")
            return
        }
        let worker = try ScanSystem.resolve(id: workerID, using: target.client)
        await #expect(throws: RemoteCallError.self) {
            _ = try await worker.run(TaskRequest(job: "j", task: 0, attempt: 1, kind: "no.such.kind", input: "0"))
        }
        // Nesting hidden inside an argument's JSON text is checked too: an error reply.
        await session.send(.call(.init(id: 102, recipient: status, target: Self.pingTarget, genericSubstitutions: [], arguments: ["0"])))
        guard case .reply(let pong)? = await session.read(), case .value = pong.outcome else {
            Issue.record("\(Self.pingTarget) is not NodeStatus.ping(delay:) any more: update pingTarget")
            return
        }
        let nested = String(repeating: "[", count: 100_000)
        await session.send(.call(.init(id: 101, recipient: status, target: Self.pingTarget, genericSubstitutions: [], arguments: [nested])))
        guard case .reply(let deep)? = await session.read(), case .error(_, let deepMessage) = deep.outcome else {
            Issue.record("no error reply for a deeply nested argument")
            return
        }
        #expect(deepMessage.contains("nested deeper"))
        #expect(target.rejections[.unknownMessageType] == 1)
        #expect(target.rejections[.unknownActor] == 2)  // the ghost, and the misdirected call
        #expect(target.rejections[.unknownTaskKind] == 1)
        // A long array in an authenticated frame (under the frame size) ends the session.
        await member.sendFrame(try session.sender.seal(Array(("[" + String(repeating: "0,", count: 200_000) + "0]").utf8)))
        #expect(await member.closedByNode())
        #expect(target.rejections[.arrayTooLong] == 1)
        member.close()

        // Batches (protocol 6): an honest one is answered call by call; a malformed one
        // (empty, holding a handshake message or a batch) is refused with the reason and
        // ends the session; so does any batch on a connection that agreed protocol 5.
        let batcher = try await RawPeer.connect(to: target.address)
        let batching = try #require(await batcher.handshake(cluster: target.cluster, secret: Self.secret, name: "batcher"), "the honest handshake failed")
        let ping = WireMessage.call(.init(id: 200, recipient: status, target: Self.pingTarget, genericSubstitutions: [], arguments: ["0"]))
        let members = WireMessage.call(.init(id: 201, recipient: status, target: Self.membersTarget, genericSubstitutions: [], arguments: []))
        await batching.send(.batch([ping, members]))
        let answers = await batching.read(2) ?? []
        #expect(Set(answers.compactMap { if case .reply(let reply) = $0, case .value = reply.outcome { reply.id } else { nil } }) == Set<UInt64>([200, 201]),
                "both calls of the batch answered: \(answers)")
        let hello = WireMessage.hello(.init(cluster: target.cluster, node: NodeID(name: "batcher", incarnation: 1), address: "", slots: 0))
        await batching.send(.batch([ping, hello]))
        guard case .refused(let refusal)? = await batching.read() else {
            Issue.record("no refusal of a batch holding a hello")
            return
        }
        #expect(refusal.reason.contains("a batch carries calls and replies only, and message 1 is hello"), "\(refusal.reason)")
        #expect(await batcher.closedByNode())
        batcher.close()
        #expect(target.rejections[.malformedFrame] == 1)
        let malformed: [[UInt8]] = [Array(#"{"type":"batch","body":[]}"#.utf8), WireBatch.payload(joining: [Array(try JSONEncoder().encode(WireMessage.batch([ping])))])]
        for (index, payload) in malformed.enumerated() {
            let peer = try await RawPeer.connect(to: target.address)
            let session = try #require(await peer.handshake(cluster: target.cluster, secret: Self.secret, name: "batcher-\(index)"), "the honest handshake failed")
            await peer.sendFrame(try session.sender.seal(payload))
            #expect(await peer.closedByNode())
            peer.close()
            #expect(target.rejections[.malformedFrame] == 2 + index)
        }
        let older = try await RawPeer.connect(to: target.address)
        let five = ProtocolVersions(lowest: 3, highest: ProtocolVersions.batching - 1)
        let olderSession = try #require(await older.handshake(cluster: target.cluster, secret: Self.secret, name: "older", protocolVersions: five), "the honest handshake failed")
        await olderSession.send(.batch([ping, members]))
        #expect(await older.closedByNode())
        older.close()
        #expect(target.rejections[.malformedFrame] == 4)
        try await target.expectHealthy(after: "session attacks")
    }

    @Test func connectionsAreCappedPerAddressAndCallsPerConnection() async throws {
        let target = try await Target { settings in
            settings.maximumConnectionsPerAddress = 3
            settings.maximumCallsPerConnection = 2
        }
        defer { target.stop() }
        // The honest client already holds one connection from 127.0.0.1: two more
        // established ones fit, then the address is at its cap.
        var clients: [ClusterSystem] = []
        for _ in 0..<2 { clients.append(try await target.join()) }
        // The node counts a client once it has checked its proof, just after the client's join returns.
        let registered = RealClock().now + 5
        while target.node.system.connectedPeers.count < 3, RealClock().now < registered { try await Task.sleep(for: .milliseconds(2)) }
        let turnedAway = try await RawPeer.connect(to: target.address)
        #expect(await turnedAway.closedByNode(within: 2))
        turnedAway.close()
        #expect(target.rejections[.tooManyConnectionsFromAddress] == 1)
        for client in clients { client.shutdown() }
        try await target.expectHealthy(after: "connection cap")

        let status = try NodeStatus.resolve(id: ActorID(node: target.node.system.node, name: NodeStatus.wellKnownName), using: target.client)
        // Slow enough that both run at once however late the second one arrives: with 1 s
        // each, a loaded machine (a build beside the lane) delivered the second after the
        // first had ended, and the two never ran together.
        let slow = (0..<2).map { _ in Task { try await status.ping(delay: 10) } }
        // Both slow calls run on the node (its count, not the client's: the client's third
        // call could otherwise overtake one of them on the way).
        try await eventually("both slow pings run on the node", within: 30) { target.node.system.runningIncomingCallCount >= 2 }
        await #expect(throws: RemoteCallError.self) { try await status.ping() }
        #expect(target.rejections[.tooManyCalls] == 1)
        for call in slow { #expect(try await call.value == "target") }
        #expect(try await status.ping() == "target")
    }

    @Test func connectionsAreCappedInTotal() async throws {
        let target = try await Target { settings in settings.maximumConnections = 2 }
        defer { target.stop() }
        let held = try await target.join()
        defer { held.shutdown() }
        let registered = RealClock().now + 5
        while target.node.system.connectedPeers.count < 2, RealClock().now < registered { try await Task.sleep(for: .milliseconds(2)) }
        let turnedAway = try await RawPeer.connect(to: target.address)
        #expect(await turnedAway.closedByNode(within: 2))
        turnedAway.close()
        #expect(target.rejections[.tooManyConnections] == 1)
        #expect(target.rejections[.tooManyConnectionsFromAddress] == 0)
    }

    @Test func aFloodOfHalfOpenConnectionsLocksOutNoMemberOrClient() async throws {
        // Caps far below the flood, as 200 connections are to the defaults.
        let target = try await Target { settings in
            settings.maximumHandshakingConnections = 8
            settings.maximumConnectionsPerAddress = 6
            settings.maximumConnections = 12
        }
        defer { target.stop() }
        // The honest client is established once the node has checked its proof, just
        // after its join returns; until then it is a stranger too, and the flood may close it.
        let registered = RealClock().now + 5
        while target.node.system.connectedPeers.isEmpty, RealClock().now < registered { try await Task.sleep(for: .milliseconds(2)) }
        try #require(!target.node.system.connectedPeers.isEmpty, "the honest client was not registered within 5 s")
        // Forty strangers on 127.0.0.1, as every client and member here, that never say hello.
        var strangers: [RawPeer] = []
        for _ in 0..<40 { strangers.append(try await RawPeer.connect(to: target.address)) }
        defer { strangers.forEach { $0.close() } }
        // At once (the strangers' 2 s handshake deadline has not passed): the established
        // client, a new client and a new member are all served.
        let status = try NodeStatus.resolve(id: ActorID(node: target.node.system.node, name: NodeStatus.wellKnownName), using: target.client)
        #expect(try await status.ping() == "target")
        for asMember in [false, true] {
            let newcomer = try await target.join(asMember: asMember)
            let reached = try NodeStatus.resolve(id: ActorID(node: target.node.system.node, name: NodeStatus.wellKnownName), using: newcomer)
            #expect(try await reached.ping() == "target", asMember ? "a member" : "a client")
            newcomer.shutdown()
        }
        // Each stranger beyond the budget closed the oldest one, and so did the first
        // newcomer (the second found a place: the first had proved itself).
        #expect(target.rejections[.tooManyHandshakes] == 40 - 8 + 1, "strangers beyond their budget were closed, oldest first")
        #expect(target.rejections[.tooManyConnectionsFromAddress] == 0 && target.rejections[.tooManyConnections] == 0)
        // The oldest strangers were closed; the newest still hold their places.
        #expect(await strangers[0].closedByNode(within: 1))
        #expect(await !strangers[39].closedByNode(within: 0.2))
        strangers.forEach { $0.close() }
        try await target.expectHealthy(after: "a flood of half-open connections")
    }

    @Test func badReplayedAndStaleBeaconsAreRejectedAndChangeNoMembership() async throws {
        let target = try await Target()
        defer { target.stop() }
        let port = target.node.settings.discoveryPort
        let listener = try UDPEndpoint(port: port)
        defer { listener.close() }
        // A real beacon of the target's, recorded off the air.
        guard let recorded = await listener.receive(timeout: 3) else {
            Issue.record("heard no beacon from the target")
            return
        }
        var generator = TestGenerator(seed: 3)
        var datagrams: [[UInt8]] = []
        for _ in 0..<100 {
            datagrams.append((0..<Int.random(in: 0...3000, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        }
        let ghost = Beacon(cluster: target.cluster, node: NodeID(name: "ghost", incarnation: 1), address: "127.0.0.1:9", slots: 4)
        for _ in 0..<20 {
            datagrams.append(BeaconAuthenticator(secret: nil).seal(ghost, now: Date().timeIntervalSince1970))
            datagrams.append(BeaconAuthenticator(secret: try ClusterSecret("some-other-secret-entirely", source: "x")).seal(ghost, now: Date().timeIntervalSince1970))
            datagrams.append(BeaconAuthenticator(secret: Self.secret).seal(ghost, now: Date().timeIntervalSince1970 - 3600))
            datagrams.append(recorded)
        }
        let before = target.rejections.snapshot
        func counted() -> Int {
            [Rejection.malformedBeacon, .unauthenticatedBeacon, .replayedBeacon].reduce(0) { $0 + target.rejections[$1] - before[$1.rawValue]! }
        }
        // One at a time, each awaited (bounded) until the target has counted it: a burst
        // could overflow the socket's receive buffer on a busy machine.
        let expected = datagrams.count
        for (index, datagram) in datagrams.enumerated() {
            listener.send(datagram)
            let deadline = RealClock().now + 2
            while counted() <= index, RealClock().now < deadline { try await Task.sleep(for: .milliseconds(1)) }
        }
        #expect(counted() == expected)
        #expect(target.rejections[.replayedBeacon] - before["beacon_replayed"]! == 40, "20 stale and 20 replays")
        #expect(target.rejections[.unauthenticatedBeacon] - before["beacon_unauthenticated"]! >= 40)
        #expect(target.node.members.allSatisfy { $0.node.name != "ghost" })
        try await target.expectHealthy(after: "bad beacons")
    }

    @Test func everyNumberInAHelloMayBeHostileAndIsRefusedWithAReason() async throws {
        let target = try await Target()
        defer { target.stop() }
        let hello = WireMessage.hello(.init(cluster: target.cluster, node: NodeID(name: "numbers", incarnation: 5), address: "127.0.0.1:9",
                                            slots: 4, authenticated: true, nonce: HandshakeAuthentication.makeNonce()))
        let variants = HostileNumbers.variants(of: String(decoding: try JSONEncoder().encode(hello), as: UTF8.self))
        #expect(variants.count == 5 * HostileNumbers.literals.count, "protocolVersion, highestProtocolVersion, incarnation, slots and waitingSlots")
        for (field, text) in variants {
            let peer = try await RawPeer.connect(to: target.address)
            await peer.sendHandshakeFrame(Array(text.utf8), secret: Self.secret)
            // A hello that decodes and is in range is welcomed; anything else is refused, with the reason.
            switch await peer.readHandshakeMessage(secret: Self.secret) {
            case .refused(let refusal)?: #expect(!refusal.reason.isEmpty, "hello with \(field)")
            case .welcome?: break
            case let answer: Issue.record("hello with \(field): no refusal to read, got \(String(describing: answer))")
            }
            peer.close()
        }
        // Well typed but out of range: the refusal names the field.
        for slots in [-1, WireMessage.Handshake.slotRange.upperBound + 1, Int.max] {
            let peer = try await RawPeer.connect(to: target.address)
            await peer.sendFrame(.hello(.init(cluster: target.cluster, node: NodeID(name: "greedy", incarnation: 1), address: "127.0.0.1:9",
                                              slots: slots, authenticated: true, nonce: HandshakeAuthentication.makeNonce())))
            guard case .refused(let refusal)? = await peer.readMessage() else {
                Issue.record("a hello with \(slots) slots was not refused")
                return
            }
            #expect(refusal.reason.contains("slots is \(slots)"), "\(refusal.reason)")
            peer.close()
        }
        for waitingSlots in [-1, WireMessage.Handshake.waitingSlotRange.upperBound + 1, Int.max] {
            let peer = try await RawPeer.connect(to: target.address)
            await peer.sendFrame(.hello(.init(cluster: target.cluster, node: NodeID(name: "greedy", incarnation: 1), address: "127.0.0.1:9",
                                              slots: 4, waitingSlots: waitingSlots, authenticated: true, nonce: HandshakeAuthentication.makeNonce())))
            guard case .refused(let refusal)? = await peer.readMessage() else {
                Issue.record("a hello with \(waitingSlots) waiting slots was not refused")
                return
            }
            #expect(refusal.reason.contains("waitingSlots is \(waitingSlots)"), "\(refusal.reason)")
            peer.close()
        }
        #expect(target.node.members.isEmpty)
        try await target.expectHealthy(after: "hostile numbers in hellos")
    }

    @Test func everyNumberInAWelcomeMayBeHostileAndTheDialEndsWithAReason() async throws {
        let target = try await Target()
        defer { target.stop() }
        // A fake node the target dials: it answers each hello with a welcome whose numbers
        // are hostile, signed with the secret whenever the handshake still decodes.
        let (listener, address) = try Socket.listen(on: SocketAddress(host: "127.0.0.1", port: 0))
        defer { close(listener) }
        let authentication = HandshakeAuthentication(secret: Self.secret)
        let template = WireMessage.Handshake(cluster: target.cluster, node: NodeID(name: "fake", incarnation: 5), address: address.description,
                                             slots: 4, authenticated: true, nonce: HandshakeAuthentication.makeNonce())
        let variants = HostileNumbers.variants(of: String(decoding: try JSONEncoder().encode(template), as: UTF8.self))
        #expect(variants.count == 5 * HostileNumbers.literals.count, "protocolVersion, highestProtocolVersion, incarnation, slots and waitingSlots")
        for (index, (field, variant)) in variants.enumerated() {
            // A name of its own each time: a fake that was welcomed holds its name a while.
            let text = variant.replacingOccurrences(of: #""name":"fake""#, with: #""name":"fake-\#(index)""#)
            let dialling = Task { try await target.node.system.join(address) }
            let peer = try await RawPeer.accept(on: listener)
            guard case .hello(let hello)? = await peer.readHandshakeMessage(secret: Self.secret) else {
                Issue.record("no hello from the target")
                peer.close()
                continue
            }
            let decoded = try? JSONDecoder().decode(WireMessage.Handshake.self, from: Data(text.utf8))
            let proof = decoded.map { authentication.acceptorProof(hello: hello, welcome: $0) } ?? ""
            await peer.sendHandshakeFrame(Array(#"{"type":"welcome","body":{"handshake":\#(text),"proof":"\#(proof)"}}"#.utf8), secret: Self.secret)
            switch await dialling.result {
            case .success:
                let acceptable = decoded.map { (try? $0.checkRanges()) != nil && ProtocolVersions.current.agreed(with: $0.protocolVersions) != nil } ?? false
                #expect(acceptable, "a welcome with \(field) was accepted")
            case .failure(let error):
                #expect("\(error)".contains("cannot reach"), "welcome with \(field): \(error)")
            }
            peer.close()
        }
        try await target.expectHealthy(after: "hostile numbers in welcomes")
    }

    @Test func everyNumberInASessionsFramesMayBeHostile() async throws {
        let target = try await Target()
        defer { target.stop() }
        let status = ActorID(node: target.node.system.node, name: NodeStatus.wellKnownName)
        let templates: [WireMessage] = [
            .heartbeat(.init(sequence: 7)), .heartbeatAck(.init(sequence: 7)), .reply(.init(id: 7, outcome: .value("1"))),
            .call(.init(id: 7, recipient: status, target: Self.pingTarget, genericSubstitutions: [], arguments: ["0"])),
        ]
        let probe: UInt64 = 424_240  // asks for an acknowledgement
        for template in templates {
            let variants = HostileNumbers.variants(of: String(decoding: try JSONEncoder().encode(template), as: UTF8.self))
            #expect(!variants.isEmpty)
            for (field, text) in variants {
                let peer = try await RawPeer.connect(to: target.address)
                defer { peer.close() }
                let session = try #require(await peer.handshake(cluster: target.cluster, secret: Self.secret, name: "numbers"), "the honest handshake failed")
                await peer.sendFrame(try session.sender.seal(Array(text.utf8)))
                await session.send(.heartbeat(.init(sequence: probe)))
                // The node either refuses the frame, saying why, or goes on serving the session.
                var outcome = "no answer"
                let deadline = RealClock().now + 3
                reading: while let message = await session.read(timeout: deadline - RealClock().now) {
                    switch message {
                    case .refused(let refusal): outcome = refusal.reason.isEmpty ? "an empty refusal" : "refused"; break reading
                    case .heartbeatAck(let beat) where beat.sequence == probe: outcome = "served"; break reading
                    default: continue
                    }
                }
                #expect(outcome == "refused" || outcome == "served", "\(template.kind) with \(field): \(outcome)")
            }
        }
        try await target.expectHealthy(after: "hostile numbers in session frames")
    }

    @Test func everyNumberInACallArgumentMayBeHostileAndGetsAnAnswer() async throws {
        let target = try await Target()
        defer { target.stop() }
        let node = target.node.system.node
        let status = ActorID(node: node, name: NodeStatus.wellKnownName)
        let worker = ActorID(node: node, name: ScanSystem.wellKnownName)
        func request(_ kind: String, input: String) throws -> String {
            String(decoding: try JSONEncoder().encode(TaskRequest(job: "numbers", task: 0, attempt: 1, kind: kind, input: input)), as: UTF8.self)
        }
        // Each target with the JSON text of its argument, and the words a refusal of a number out of range names.
        var calls: [(recipient: ActorID, target: String, argument: String, field: String, refusal: String?)] = []
        for (target, template, names) in [(Self.pingTarget, "0", "ping delay"), (Self.observeTarget, "0", nil)] as [(String, String, String?)] {
            for (field, text) in HostileNumbers.variants(of: template) { calls.append((status, target, text, field, names)) }
        }
        for (field, text) in HostileNumbers.variants(of: try request(NoopTask.name, input: "0")) {
            calls.append((worker, Self.runTarget, text, "request " + field, nil))
        }
        for kind in [NoopTask.name, SleepTask.name] {
            for (field, text) in HostileNumbers.variants(of: "0") {
                calls.append((worker, Self.runTarget, try request(kind, input: text), "\(kind) input " + field, kind == SleepTask.name ? "bench.sleep seconds" : nil))
            }
        }
        let peer = try await RawPeer.connect(to: target.address)
        let session = try #require(await peer.handshake(cluster: target.cluster, secret: Self.secret, name: "numbers"), "the honest handshake failed")
        // All at once (a valid sleep or ping waits 1.5 s), then every reply, matched by id.
        for (index, call) in calls.enumerated() {
            await session.send(.call(.init(id: UInt64(index), recipient: call.recipient, target: call.target, genericSubstitutions: [], arguments: [call.argument])))
        }
        var outcomes: [UInt64: WireMessage.Reply.Outcome] = [:]
        let deadline = RealClock().now + 10
        while outcomes.count < calls.count, let message = await session.read(timeout: deadline - RealClock().now) {
            // Replies come alone or, several at once, in batches (protocol 6).
            let replies = if case .batch(let members) = message { members } else { [message] }
            for case .reply(let reply) in replies { outcomes[reply.id] = reply.outcome }
        }
        var refused = 0
        for (index, call) in calls.enumerated() {
            switch outcomes[UInt64(index)] {
            case nil:
                Issue.record("\(call.field): no reply")
            case .error(_, let message)?:
                #expect(!message.isEmpty, "\(call.field)")
                if message.contains("this node accepts") { refused += 1 }
                if let words = call.refusal, ["1e300", "-1", "-1e300"].contains(where: { call.field.hasSuffix(" as \($0)") }) {
                    #expect(message.contains(words), "\(call.field): \(message)")
                }
            case .value?, .void?:
                break
            }
        }
        #expect(refused > 0 && target.rejections[.valueOutOfRange] == refused, "each refusal of a number is counted")
        peer.close()
        try await target.expectHealthy(after: "hostile numbers in call arguments")
    }

    @Test func beaconsAnnouncingSlotsOutOfRangeAreDropped() async throws {
        let target = try await Target()
        defer { target.stop() }
        let endpoint = try UDPEndpoint(port: target.node.settings.discoveryPort)
        defer { endpoint.close() }
        let counts = [-1, WireMessage.Handshake.slotRange.upperBound + 1, Int.max]
        for (index, slots) in counts.enumerated() {
            let ghost = Beacon(cluster: target.cluster, node: NodeID(name: "ghost-\(index)", incarnation: 1), address: "127.0.0.1:9", slots: slots)
            endpoint.send(BeaconAuthenticator(secret: Self.secret).seal(ghost, now: Date().timeIntervalSince1970))
            let deadline = RealClock().now + 3
            while target.rejections[.valueOutOfRange] <= index, RealClock().now < deadline { try await Task.sleep(for: .milliseconds(1)) }
        }
        #expect(target.rejections[.valueOutOfRange] == counts.count)
        #expect(target.node.members.allSatisfy { !$0.node.name.hasPrefix("ghost") }, "\(target.node.members)")
        try await target.expectHealthy(after: "beacons with hostile slots")
    }

    /// The mangled name of `NodeStatus.members()`, as a member sends it.
    static let membersTarget = "$s13SpokesCluster10NodeStatusC7membersSayAA06MemberD0VGyYaKFTE"
    /// The mangled name of `ScanSystem.count()`.
    static let workerCountTarget = "$s13SpokesCluster10ScanSystemC5countSiyYaKFTE"
    /// The mangled name of `NodeStatus.ping(delay:)`.
    static let pingTarget = "$s13SpokesCluster10NodeStatusC4ping5delaySSSd_tYaKFTE"
    /// The mangled name of `NodeStatus.observe(tasksAfter:)`.
    static let observeTarget = "$s13SpokesCluster10NodeStatusC7observe10tasksAfterAA0C11ObservationVs6UInt64V_tYaKFTE"
    /// The mangled name of `ScanSystem.run(_:)`.
    static let runTarget = "$s13SpokesCluster10ScanSystemC3runyAA10TaskResultOAA0F7RequestVYaKFTE"
}

/// A UDP socket on the loopback broadcast address and a discovery port, to hear and
/// send beacons like a stranger on the same machine. Sends only to 127.255.255.255.
final class UDPEndpoint: Sendable {
    let fd: Int32
    let port: UInt16

    init(port: UInt16) throws {
        self.port = port
        fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &yes, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(fd, SOL_SOCKET, SO_BROADCAST, &yes, socklen_t(MemoryLayout<Int32>.size))
        var local = SocketAddress(host: "127.255.255.255", port: port).sockaddr
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw TransportError.socketFailed(operation: "bind", address: "\(port)", errno: errno) }
    }

    /// The next datagram, or nil after `timeout` seconds.
    func receive(timeout: Double) async -> [UInt8]? {
        try? await offPool {
            var poller = pollfd(fd: self.fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(timeout * 1000)) > 0 else { return nil }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let count = buffer.withUnsafeMutableBytes { recv(self.fd, $0.baseAddress, $0.count, 0) }
            return count > 0 ? Array(buffer[..<count]) : nil
        }
    }

    func send(_ datagram: [UInt8]) {
        var destination = SocketAddress(host: "127.255.255.255", port: port).sockaddr
        _ = datagram.withUnsafeBytes { bytes in
            withUnsafePointer(to: &destination) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
    }

    func close() {
        Glibc.close(fd)
    }
}
