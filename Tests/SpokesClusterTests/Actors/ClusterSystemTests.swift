import Distributed
import Foundation
import SpokesClusterTestKit
import SpokesConcurrency
import SpokesTestKit
import Testing
@testable import SpokesCluster

/// Actor systems calling each other: on a simulated network under a virtual clock (the
/// unit lane), with bounds in virtual seconds; what needs real sockets (a call over real
/// loopback, bytes from a raw socket) in the process lane.
@Suite(.simulated, .hangGuard)
struct ClusterSystemTests {
    /// Two systems on a simulated network, `node-0` hosting a greeter named "greeter"
    /// and `node-1` joined to it.
    struct Pair {
        let cluster: SimulatedCluster
        let host: ClusterSystem
        let caller: ClusterSystem
        let local: Greeter
        /// `node-1`'s proxy of the greeter.
        let remote: Greeter

        /// Awaits `operation` while virtual time moves (at most 20 virtual seconds).
        @discardableResult
        func complete<Value: Sendable>(_ what: String, _ operation: @escaping @Sendable () async throws -> Value) async throws -> Value {
            try await cluster.complete(what, within: 20, operation)
        }
    }

    /// `count` systems named `node-0`, `node-1`, ... with a call timeout of 10 s, then `configure`d.
    static func systems(_ count: Int, on cluster: SimulatedCluster, configure: (inout ClusterSettings, Int) -> Void = { _, _ in }) throws -> [ClusterSystem] {
        try (0..<count).map { index in
            try cluster.system(named: "node-\(index)") { settings in
                settings.callTimeout = 10
                configure(&settings, index)
            }
        }
    }

    func connectedPair(
        napStarted: @escaping @Sendable () -> Void = {}, configure: (inout ClusterSettings, Int) -> Void = { _, _ in }
    ) async throws -> Pair {
        let cluster = try SimulatedCluster(0)
        let systems = try Self.systems(2, on: cluster, configure: configure)
        let host = systems[0]
        let local = cluster.keep(ClusterSystem.withWellKnownName("greeter") { Greeter(actorSystem: host, napStarted: napStarted) })
        try await cluster.complete("node-1 joins node-0", within: 10) { try await systems[1].join(host.address) }
        let remote = try Greeter.resolve(id: ActorID(node: host.node, name: "greeter"), using: systems[1])
        return Pair(cluster: cluster, host: host, caller: systems[1], local: local, remote: remote)
    }

    @Test func callsADistributedFunctionOnAnotherNode() async throws {
        let pair = try await connectedPair()
        defer { pair.cluster.stop() }
        let remote = pair.remote
        #expect(try await pair.complete("the greeting") { try await remote.greet("ada") } == "hello ada from node-0")
        #expect(pair.local.id == remote.id)
        #expect(__isRemoteActor(remote))
    }

    @Test func resolvingALocalIDGivesTheLocalActor() async throws {
        let pair = try await connectedPair()
        defer { pair.cluster.stop() }
        let again = try Greeter.resolve(id: pair.local.id, using: pair.host)
        #expect(!__isRemoteActor(again))
        #expect(try await again.greet("x") == "hello x from node-0")
    }

    @Test func remoteErrorsComeBackWithTheirTypeAndMessage() async throws {
        let pair = try await connectedPair()
        defer { pair.cluster.stop() }
        let remote = pair.remote
        await #expect(throws: RemoteCallError.remoteError(type: "GreeterError", message: "no greeting for strangers", node: "node-0")) {
            try await pair.complete("the refusal") { try await remote.refuse() }
        }
    }

    @Test func genericFunctionsCarryTheirTypes() async throws {
        let pair = try await connectedPair()
        defer { pair.cluster.stop() }
        let remote = pair.remote
        #expect(try await pair.complete("an echo") { try await remote.echo(42) } == 42)
        #expect(try await pair.complete("an echo") { try await remote.echo(["a": [1.5, 2]]) } == ["a": [1.5, 2]])
    }

    @Test func actorReferencesTravelAsArgumentsAndResults() async throws {
        let pair = try await connectedPair()
        defer { pair.cluster.stop() }
        let remote = pair.remote
        // A greeter on node 1, passed to node 0, which calls back.
        let mine = pair.cluster.keep(Greeter(actorSystem: pair.caller))
        #expect(try await pair.complete("the relay") { try await remote.relay(to: mine, name: "bo") } == "hello bo from node-1")
        // A counter made on node 0 and returned to node 1 keeps its state there.
        let counter = try await pair.complete("a counter") { try await remote.makeCounter() }
        #expect(__isRemoteActor(counter))
        #expect(try await pair.complete("an increment") { try await counter.increment() } == 1)
        #expect(try await pair.complete("an increment") { try await counter.increment() } == 2)
    }

    @Test func callsToAMissingActorFailClearly() async throws {
        let pair = try await connectedPair()
        defer { pair.cluster.stop() }
        let ghost = try Greeter.resolve(id: ActorID(node: pair.host.node, name: "ghost"), using: pair.caller)
        await #expect(throws: RemoteCallError.self) { try await pair.complete("a call to a ghost") { try await ghost.greet("x") } }
        #expect(throws: RemoteCallError.actorNotFound("ghost@\(pair.host.node)")) {
            try Greeter.resolve(id: ActorID(node: pair.host.node, name: "ghost"), using: pair.host)
        }
    }

    @Test func aDroppedConnectionFailsWaitingCallsAtOnce() async throws {
        let napping = Promise<Void, Never>()
        let pair = try await connectedPair(napStarted: { napping.resolve(()) })
        defer { pair.cluster.stop() }
        let remote = pair.remote
        let waiting = Task { try await remote.nap(seconds: 30) }
        // Once the call is running on node 0, drop node 0.
        try await pair.cluster.run(until: "the nap runs on node-0", within: 5) { napping.future.isComplete }
        let start = pair.cluster.clock.now
        pair.host.shutdown()
        do {
            try await pair.complete("the waiting call ends") { try await waiting.value }
            Issue.record("the call should have failed")
        } catch let error as RemoteCallError {
            guard case .peerDisconnected(let node, _) = error else {
                Issue.record("expected peerDisconnected, got \(error)")
                return
            }
            #expect(node == "node-0")
        }
        let waited = pair.cluster.clock.now - start
        #expect(waited < 0.5, "failed at once, not at the 10 s call deadline: \(waited) virtual s")
    }

    /// A frame larger than `limits.max_frame_bytes` is refused by its receiver, which
    /// closes the connection (every call on it failing, the peer declared dead): a Raft
    /// append of one too large command did that at 16,000 real-time bike users. So such a
    /// call fails alone, saying why, and such a reply goes back as an error saying so;
    /// the connection and the calls beside it go on.
    @Test func aCallOrReplyLargerThanAFrameFailsAloneAndTheConnectionLives() async throws {
        let pair = try await connectedPair(configure: { settings, _ in settings.maximumFrameSize = 64 * 1024 })
        defer { pair.cluster.stop() }
        let remote = pair.remote
        let large = String(repeating: "x", count: 80 * 1024)
        do {
            _ = try await pair.complete("a call too large") { try await remote.greet(large) }
            Issue.record("a call larger than a frame was sent")
        } catch let error as RemoteCallError {
            guard case .serializationFailed(let reason) = error else { throw error }
            #expect(reason.contains("limits.max_frame_bytes") && reason.contains("greet"), "\(reason)")
        }
        #expect(try await pair.complete("a greeting after it") { try await remote.greet("ada") } == "hello ada from node-0")
        do {
            _ = try await pair.complete("a reply too large") { try await remote.repeated("y", times: 80 * 1024) }
            Issue.record("a reply larger than a frame was sent")
        } catch let error as RemoteCallError {
            guard case .remoteError(let type, let message, _) = error else { throw error }
            #expect(type == "FrameTooLarge" && message.contains("limits.max_frame_bytes"), "\(type): \(message)")
        }
        #expect(try await pair.complete("a greeting after that") { try await remote.greet("bob") } == "hello bob from node-0")
        #expect(pair.caller.openConnectionCount == 1 && pair.host.openConnectionCount == 1, "one connection all along")
    }

    @Test func aCallWithoutAReplyTimesOutAtTheCallTimeout() async throws {
        let pair = try await connectedPair(configure: { settings, _ in settings.callTimeout = 1.5 })
        defer { pair.cluster.stop() }
        let remote = pair.remote
        let start = pair.cluster.clock.now
        await #expect(throws: RemoteCallError.timedOut(target: "SpokesClusterTests.Greeter.nap(seconds:)", node: "node-0", seconds: 1.5)) {
            try await pair.complete("the nap times out") { try await remote.nap(seconds: 5) }
        }
        let waited = pair.cluster.clock.now - start
        #expect(waited >= 1.5 && waited < 1.6, "at the 1.5 s call timeout: \(waited) virtual s")
        #expect(try await pair.complete("a greeting after") { try await remote.greet("after") } == "hello after from node-0", "the connection still works")
    }

    /// A task attempt's deadline (`JobRunner`) is its call's: a scope's deadline shorter
    /// than the call timeout ends the call with `TimeoutError` on the call's own timer,
    /// and one longer leaves the call timeout in charge.
    @Test func aCallDeadlineShorterThanTheCallTimeoutEndsTheCallAtIt() async throws {
        let pair = try await connectedPair(configure: { settings, _ in settings.callTimeout = 3 })
        defer { pair.cluster.stop() }
        let remote = pair.remote
        var start = pair.cluster.clock.now
        await #expect(throws: TimeoutError(seconds: 0.5)) {
            try await pair.complete("the nap passes its deadline") { try await ClusterSystem.withCallDeadline(0.5) { try await remote.nap(seconds: 5) } }
        }
        var waited = pair.cluster.clock.now - start
        #expect(waited >= 0.5 && waited < 0.6, "at the 0.5 s deadline: \(waited) virtual s")
        start = pair.cluster.clock.now
        await #expect(throws: RemoteCallError.timedOut(target: "SpokesClusterTests.Greeter.nap(seconds:)", node: "node-0", seconds: 3)) {
            try await pair.complete("the call timeout comes first") { try await ClusterSystem.withCallDeadline(60) { try await remote.nap(seconds: 5) } }
        }
        waited = pair.cluster.clock.now - start
        #expect(waited >= 3 && waited < 3.1, "at the 3 s call timeout: \(waited) virtual s")
        #expect(try await pair.complete("a greeting within its deadline") { try await ClusterSystem.withCallDeadline(0.5) { try await remote.greet("bob") } } == "hello bob from node-0")
    }

    @Test func aNodeOfAnotherClusterIsRefused() async throws {
        let cluster = try SimulatedCluster(0)
        defer { cluster.stop() }
        let systems = try Self.systems(2, on: cluster) { settings, index in settings.cluster = index == 0 ? "blue" : "green" }
        do {
            try await cluster.complete("the join", within: 10) { try await systems[1].join(systems[0].address) }
            Issue.record("join should have been refused")
        } catch let error as RemoteCallError {
            #expect("\(error)".contains("refused: node-0 is a node of cluster 'blue', not 'green'"), "\(error)")
        }
        #expect(systems[0].connectedPeers.isEmpty)
    }

    /// A client that names a node but no cluster joins that node's cluster; a member
    /// never does, and a client that names a cluster is held to it.
    @Test func aClientThatJoinsAnyClusterGetsInAndAMemberDoesNot() async throws {
        let cluster = try SimulatedCluster(0)
        defer { cluster.stop() }
        let node = try Self.systems(1, on: cluster) { settings, _ in settings.cluster = "blue" }[0]
        let address = node.address
        func green(_ settings: inout ClusterSettings) {
            settings.cluster = "green"
            settings.joinsAnyCluster = true
        }
        let client = try cluster.client(configure: green)
        let welcome = try await cluster.complete("the client joins", within: 10) { try await client.join(address) }
        #expect(welcome.cluster == "blue", "the client learns the node's cluster")
        let member = try cluster.system(named: "member", configure: green)
        await #expect(throws: RemoteCallError.self, "a member of another cluster is refused whatever it asks") {
            try await cluster.complete("the member's join", within: 10) { try await member.join(address) }
        }
        let strict = try cluster.client { settings in
            green(&settings)
            settings.joinsAnyCluster = false
        }
        await #expect(throws: RemoteCallError.self, "a client that names its cluster is held to it") {
            try await cluster.complete("the strict client's join", within: 10) { try await strict.join(address) }
        }
    }

    @Test func nodesDiallingEachOtherAtOnceKeepOneConnection() async throws {
        let cluster = try SimulatedCluster(0)
        defer { cluster.stop() }
        let systems = try Self.systems(2, on: cluster)
        let a = systems[0], b = systems[1]
        try await cluster.complete("both joins", within: 10) {
            async let ab = a.join(b.address)
            async let ba = b.join(a.address)
            _ = try await (ab, ba)
        }
        let greeter = cluster.keep(ClusterSystem.withWellKnownName("greeter") { Greeter(actorSystem: b) })
        let remote = try Greeter.resolve(id: greeter.id, using: a)
        #expect(try await cluster.complete("the greeting", within: 10) { try await remote.greet("race") } == "hello race from node-1")
        #expect(a.connectedPeers.map(\.node) == [b.node])
        #expect(b.connectedPeers.map(\.node) == [a.node])
    }

    /// Issue 21 §2: when two nodes that are connected dial each other again (a split
    /// heals), the connection that loses is closed only once the calls over it are
    /// answered: a call in flight on it succeeds.
    @Test func aCallInFlightOnTheLosingDuplicateConnectionIsAnswered() async throws {
        let cluster = try SimulatedCluster(0)
        defer { cluster.stop() }
        let systems = try Self.systems(2, on: cluster)
        let a = systems[0], b = systems[1]
        cluster.keep(ClusterSystem.withWellKnownName(NodeStatus.wellKnownName) { NodeStatus(actorSystem: a, report: { [] }) })
        // node-1 dials first; node-0's later dial wins (the lower dialler's name).
        try await cluster.complete("node-1 joins", within: 10) { try await b.join(a.address) }
        let status = try NodeStatus.resolve(id: ActorID(node: a.node, name: NodeStatus.wellKnownName), using: b)
        // The loser is retired after the handshake timeout: the call outlasts it.
        let delay = a.settings.handshakeTimeout + 2
        let slow = Task { try await status.ping(delay: delay) }
        try await cluster.run(until: "the slow call is in flight", within: 1) { b.pendingCallCount == 1 }
        try await cluster.complete("node-0 joins", within: 10) { try await a.join(b.address) }
        #expect(try await cluster.complete("the slow call", within: delay + 5) { try await slow.value } == "node-0", "the call on the losing connection was answered")
        try await cluster.run(until: "one connection left on each side", within: 10) { a.openConnectionCount == 1 && b.openConnectionCount == 1 }
        #expect(try await cluster.complete("a ping", within: 10) { try await status.ping() } == "node-0")
    }

    /// One call over real loopback sockets: the network the other tests simulate.
    @Test(.processLane) func aCallCrossesARealLoopbackConnection() async throws {
        let cluster = try TestSystems(2)
        defer { cluster.shutdown() }
        let host = cluster.systems[0]
        let local = cluster.keep(ClusterSystem.withWellKnownName("greeter") { Greeter(actorSystem: host) })
        try await cluster.systems[1].join(host.address)
        let remote = try Greeter.resolve(id: ActorID(node: host.node, name: "greeter"), using: cluster.systems[1])
        #expect(try await remote.greet("ada") == "hello ada from node-0")
        #expect(local.id == remote.id && __isRemoteActor(remote))
    }

    /// Bytes from a raw socket: hostile input at the socket level stays on real sockets.
    @Test(.processLane) func garbageOnTheWireClosesOnlyThatConnection() async throws {
        let cluster = try TestSystems(2)
        defer { cluster.shutdown() }
        let host = cluster.systems[0]
        cluster.keep(ClusterSystem.withWellKnownName("greeter") { Greeter(actorSystem: host) })
        try await cluster.systems[1].join(host.address)
        let remote = try Greeter.resolve(id: ActorID(node: host.node, name: "greeter"), using: cluster.systems[1])
        for payload in [Array("GET / HTTP/1.1\r\n\r\n".utf8), [0xFF, 0xFF, 0xFF, 0xFF, 1, 2], FrameDecoder.frame(Array("{\"type\": \"call\"}".utf8)),
                        FrameDecoder.frame(Array("{\"type\": \"bogus\", \"body\": {}}".utf8)), [0, 0, 0, 9, 1]] {
            try RawClient.send(payload, to: host.address)
        }
        #expect(try await remote.greet("still") == "hello still from node-0")
    }
}

/// Sends raw bytes to a node and hangs up, as an attacker or a confused program would.
enum RawClient {
    static func send(_ bytes: [UInt8], to address: SocketAddress) throws {
        let fd = try Socket.connect(to: address, timeout: 2)
        _ = Socket.sendAll(fd, bytes)
        close(fd)
    }
}
