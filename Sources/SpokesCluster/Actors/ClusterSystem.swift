import Distributed
import FoundationEssentials
import Glibc
import SpokesConcurrency
import Synchronization

/// Spokes' `DistributedActorSystem`: one per node. It keeps the node's local distributed
/// actors, connects to peers over TCP, and turns calls on remote actors into
/// ``WireMessage/call`` frames and their replies back into return values or errors.
///
/// Invariants:
/// - every pending call ends exactly once: with its reply, its deadline
///   (``RemoteCallError/timedOut(target:node:seconds:)``), or at once when the connection
///   it was sent on drops (``RemoteCallError/peerDisconnected(node:reason:)``);
/// - there is at most one registered connection per peer node; when two nodes dial each
///   other at once, both keep the connection dialled by the node whose name sorts first.
public final class ClusterSystem: DistributedActorSystem, Sendable {
    public typealias ActorID = SpokesCluster.ActorID
    public typealias SerializationRequirement = any Codable
    public typealias InvocationEncoder = ClusterInvocationEncoder
    public typealias InvocationDecoder = ClusterInvocationDecoder
    public typealias ResultHandler = ClusterResultHandler

    /// Names the actor being initialised, for well-known actors; see ``withWellKnownName(_:_:)``.
    @TaskLocal static var wellKnownName: String?

    /// The node whose connection carried the remote call running now: what its handshake
    /// proved (with a secret, by the secret), nil outside an incoming call (a local call).
    /// A distributed method that is told a name by its caller checks it against this, so
    /// a caller cannot speak for another node (``RaftEndpoint`` does for a replica's name).
    @TaskLocal public static var caller: NodeID?

    /// A deadline, in seconds, for each remote call made in this scope
    /// (``withCallDeadline(_:_:)``): when it is shorter than `limits.call_timeout`, such a
    /// call fails with ``TimeoutError`` once it passes, through the call's own timer.
    @TaskLocal static var callDeadline: Double?

    /// Runs `operation` with every remote call it makes bounded by `seconds`
    /// (``TimeoutError`` once they pass; a call to a node with no open connection fails
    /// at once), as `withTimeout` bounds it, but on each call's own timer in the table of
    /// pending calls: no task of its own, no second timer. For one remote call: a task
    /// attempt's, many thousand a second on a busy coordinator, where `withTimeout`'s
    /// task, continuation and timer were about a tenth of the samples (BENCHMARKS.md,
    /// "Before and after"). A local call makes no remote call and is not bounded here.
    public static func withCallDeadline<T: Sendable>(_ seconds: Double, _ operation: () async throws -> T) async rethrows -> T {
        try await $callDeadline.withValue(seconds, operation: operation)
    }

    public let node: NodeID
    public let settings: ClusterSettings
    /// Where this node accepts connections.
    public let address: SocketAddress
    /// Where other nodes reach it: `node.advertise` (behind NAT, in a container), or
    /// ``address``. What its handshakes and beacons announce.
    public let advertisedAddress: SocketAddress

    private let listener: any StreamListener
    private let registry = Mutex<[String: WeakActor]>([:])
    private let connections = Mutex<[String: Connection]>([:])
    /// Every open connection, registered or not (handshaking, or the loser of a dial
    /// race): shutdown closes them all.
    private let openConnections = Mutex<[Connection]>([])
    private let pendingCalls = Mutex<[UInt64: PendingCall]>([:])
    private let nextCallID = Atomic<UInt64>(1)
    /// Calls received under an older release's name, by that name (only peers of an
    /// older protocol touch it).
    private let renamedCalls = Mutex<[String: Int]>([:])
    /// The distributed functions run here, with their parameter and result types.
    private let targets = DistributedTargets()
    private let loggedLines = Mutex<Set<String>>([])
    private let nextActorNumber = Atomic<UInt64>(1)
    /// The secrets this node holds (they prove and check handshakes and seal everything
    /// sent); nil in an open cluster. `spokes keyring` changes it while the node runs.
    public let keyring: KeyringStore?
    /// What this node turned away, by kind: shown by `spokes status --json`.
    public let rejections = RejectionCounters()
    /// Frames and bytes its connections sent and received: `GET /metrics`.
    public let traffic = TrafficCounters()
    private let peerEvents = Mutex<[Int: AsyncStream<PeerEvent>.Continuation]>([:])
    /// The key of the next stream of ``peerEventStream()``: streams hear events in the
    /// order they were made, the same every run.
    private let nextPeerEventStream = Atomic<Int>(0)

    /// False for a client (`spokes status`, `spokes submit`): it listens only for its own
    /// replies and its handshake says so (empty address, no slots), so nodes do not
    /// count it as a member.
    public let isMember: Bool
    private let heartbeatSequence = Atomic<UInt64>(0)
    /// Worker calls (``ScanSystem``) received and running here, per connection they came
    /// on (by the connection's identity), so a lost connection cancels them.
    private let incomingCalls = Mutex<[ObjectIdentifier: [UInt64: Task<Void, Never>]]>([:])
    private let incomingCallNumber = Atomic<UInt64>(0)
    /// Where ``log(_:level:)`` goes, labelled with this node's name.
    public let logger: Logger
    /// The clock, timers and seeds this node's shells use (``Runtime/real`` on a machine).
    public let runtime: Runtime
    /// Set by ``shutdown()``: a stopped node dials nobody.
    private let isShutDown = Atomic<Bool>(false)
    /// Well-known actors whose calls are the node's own protocol (Raft's `raft`): run,
    /// both ways, on the runtime's protocol thread (``Runtime/protocolExecutor``), never
    /// behind user tasks on the cooperative pool.
    private let protocolActorNames = Mutex<Set<String>>([])

    /// Runs calls to the well-known actor `name` (received here, and sent from here to
    /// any node's) on the runtime's protocol thread. For short protocol work only: it
    /// shares that one thread with heartbeats and ticks.
    public func runOnProtocolThread(callsTo name: String) {
        protocolActorNames.withLock { _ = $0.insert(name) }
    }

    /// The executor calls to `recipient` prefer: the protocol thread for a protocol
    /// actor's, none (the pool) for the others.
    private func executor(forCallsTo recipient: ActorID) -> ProtocolExecutor? {
        guard let executor = runtime.protocolExecutor, protocolActorNames.withLock({ $0.contains(recipient.name) }) else { return nil }
        return executor
    }

    /// Starts a node: binds its listener and begins accepting peers. Without a secret it
    /// refuses to listen beyond loopback unless `settings.allowInsecure`
    /// (``SecurityError/insecureAddress(host:)``). Its log goes to `logger` (by default nowhere);
    /// its shells read time and sleep through `runtime`.
    public init(settings: ClusterSettings, isMember: Bool = true, logger: Logger = .discard, runtime: Runtime = .real) throws {
        self.isMember = isMember
        self.runtime = runtime
        var settings = settings
        let random = String(UInt32(truncatingIfNeeded: runtime.seed()), radix: 36)
        if !isMember {
            // A client's name must never be a member's, or its connection would take the
            // member's place in a node's connections (even the node.name of a shared config).
            settings.nodeName = (settings.nodeName.isEmpty ? "client" : settings.nodeName + ".client") + "-" + random
        } else if settings.nodeName.isEmpty {
            settings.nodeName = "node-\(random)"
        }
        self.settings = settings
        self.logger = logger.labeled(settings.nodeName).timed(by: runtime.clock)
        keyring = settings.keyring.map(KeyringStore.init)
        node = NodeID(name: settings.nodeName, incarnation: runtime.incarnations.next())
        try Self.checkListenAddress(settings)
        listener = try runtime.network.listen(on: SocketAddress(host: settings.host, port: settings.port))
        address = listener.address
        do {
            advertisedAddress = settings.advertise.isEmpty ? listener.address : try SocketAddress(parsing: settings.advertise)
        } catch {
            listener.stop()
            throw TransportError.invalidAddress(settings.advertise, reason: "node.advertise (--advertise) must be HOST:PORT, an IPv4 address and a port")
        }
        listener.start { [weak self] stream in
            guard let self else { return stream.close() }
            self.accept(stream)
        }
        if !isMember { watchPeers() }
        keyring?.observe { [weak self] keyring in self?.replaceConnections(sealedWithout: keyring) }
    }

    /// A client's watchdog (issue 21 §1): a node watches its peers through membership; a
    /// client has none, and its calls may wait for days (a job's). So every heartbeat
    /// interval it sends a heartbeat on each connection (the node heartbeats its
    /// connections too, and any message refreshes the connection's `lastReceived`) and
    /// closes a connection
    /// whose peer has said nothing for twice `heartbeat.dead_after` (2.4 s by default: a
    /// client is more patient than a member, since a wrong verdict costs the user's
    /// command), failing the calls on it with ``RemoteCallError/peerDisconnected(node:reason:)``,
    /// whose reason says since when. A round that comes late (this process was paused)
    /// judges nobody: the silence it would see is its own. Ends at ``shutdown()``.
    private func watchPeers() {
        let interval = settings.heartbeatInterval
        let deadAfter = 2 * settings.deadTimeout
        Task { [weak self] in
            var lastRound = self?.runtime.now ?? 0
            while let self, !self.isShutDown.load(ordering: .acquiring) {
                self.sendHeartbeats()
                let now = self.runtime.now
                let late = now - lastRound > max(3 * interval, deadAfter / 2)
                lastRound = now
                for connection in self.connections.withLock({ Array($0.values) }) where !late && now - connection.lastReceived > deadAfter {
                    let silent = now - connection.lastReceived
                    let since = UTCTime.iso8601(Date(timeIntervalSince1970: self.runtime.unixNow - silent))
                    connection.close(reason: "no answer to heartbeats for \(String(printf: "%.1f", silent)) s (since \(since)); a client waits twice heartbeat.dead_after")
                }
                try? await self.runtime.sleep(for: interval)
            }
        }
    }

    /// Throws ``SecurityError/insecureAddress(host:)`` if `settings` would have a node
    /// without a secret listen beyond loopback without `allowInsecure`.
    public static func checkListenAddress(_ settings: ClusterSettings) throws(SecurityError) {
        if settings.secret == nil, !settings.allowInsecure, !SocketAddress(host: settings.host, port: 0).isLoopback {
            throw .insecureAddress(host: settings.host)
        }
    }

    /// Stops accepting, says `leave` on every connection and closes it, and fails every
    /// pending call. Returns without waiting for the goodbyes to be sent.
    public func shutdown() {
        _ = leaveAll()
    }

    /// Like ``shutdown()``, then waits (at most `seconds`) until the goodbyes are sent,
    /// so a process may exit right after.
    public func shutdown(flushingFor seconds: Double) async {
        let open = leaveAll()
        let flushed = Promise<Void, Never>()
        startBlocking("spokes.shutdown") {
            for connection in open { connection.drainWrites() }
            flushed.resolve(())
        }
        _ = try? await withTimeout(seconds: seconds, clock: runtime.clock) { await flushed.future.value }
    }

    private func leaveAll() -> [Connection] {
        isShutDown.store(true, ordering: .releasing)
        listener.stop()
        connections.withLock { $0.removeAll() }
        let open = openConnections.withLock { $0 }
        for connection in open {
            connection.send(.leave, thenCloseWithReason: "\(node.name) is shutting down")
        }
        // Finish outside the lock: finishing runs onTermination, which takes it.
        let finishing = peerEvents.withLock { streams in
            defer { streams.removeAll() }
            return streams.sorted { $0.key < $1.key }.map(\.value)
        }
        for stream in finishing { stream.finish() }
        return open
    }

    // MARK: - Actor lifecycle

    /// Makes the actors initialised in `body` take the fixed name `name`, so other nodes
    /// can address them without being told their id.
    public static func withWellKnownName<T>(_ name: String, _ body: () throws -> T) rethrows -> T {
        try $wellKnownName.withValue(name, operation: body)
    }

    public func assignID<Act: DistributedActor>(_ actorType: Act.Type) -> ActorID where Act.ID == ActorID {
        if let name = Self.wellKnownName { return ActorID(node: node, name: name) }
        return ActorID(node: node, name: "\(Act.self)-\(nextActorNumber.wrappingAdd(1, ordering: .relaxed).oldValue)")
    }

    public func actorReady<Act: DistributedActor>(_ actor: Act) where Act.ID == ActorID {
        registry.withLock { $0[actor.id.name] = WeakActor(actor) }
    }

    public func resignID(_ id: ActorID) {
        registry.withLock { registry in
            if registry[id.name]?.actor == nil || registry[id.name]?.actor?.id as? ActorID == id {
                registry[id.name] = nil
            }
        }
    }

    public func resolve<Act: DistributedActor>(id: ActorID, as actorType: Act.Type) throws -> Act? where Act.ID == ActorID {
        guard id.node == node else { return nil }
        guard let actor = registry.withLock({ $0[id.name]?.actor }) else {
            throw RemoteCallError.actorNotFound(id.description)
        }
        guard let typed = actor as? Act else {
            throw RemoteCallError.actorNotFound("\(id) is a \(type(of: actor)), not a \(Act.self)")
        }
        return typed
    }

    /// A decoder for an argument or a reply without a hand form (``HandWrittenArgument``),
    /// with this system in its `userInfo` so actor references among them resolve here.
    /// Made only for such a value: a call and its reply in the hand form (a task's
    /// request and result, a Raft delivery) made two decoders each and used neither.
    /// Not kept either, since the system in its `userInfo` would then keep itself.
    func argumentDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.userInfo[.actorSystemKey] = self
        return decoder
    }

    public func makeInvocationEncoder() -> InvocationEncoder {
        ClusterInvocationEncoder()
    }

    // MARK: - Outgoing calls

    public func remoteCall<Act: DistributedActor, Err: Error, Res: Codable>(
        on actor: Act, target: RemoteCallTarget, invocation: inout InvocationEncoder,
        throwing: Err.Type, returning: Res.Type
    ) async throws -> Res where Act.ID == ActorID {
        let outcome = try await send(invocation, to: actor.id, target: target)
        switch outcome {
        case .value(let text):
            do {
                let bytes = Array(text.utf8)
                try settings.jsonLimits.check(bytes)
                // In the hand form (``HandWrittenArgument``) by hand, as arguments are.
                if let type = Res.self as? any HandWrittenArgument.Type, let value = type.init(handWrittenJSON: bytes[...]) as? Res { return value }
                return try argumentDecoder().decode(Res.self, from: Data(bytes))
            } catch {
                throw RemoteCallError.serializationFailed("reply to \(target.identifier) is not a \(Res.self): \(error)")
            }
        case .void:
            throw RemoteCallError.serializationFailed("\(target.identifier) returned nothing, expected \(Res.self)")
        case .error(let type, let message):
            throw RemoteCallError.remoteError(type: type, message: message, node: actor.id.node.name)
        }
    }

    public func remoteCallVoid<Act: DistributedActor, Err: Error>(
        on actor: Act, target: RemoteCallTarget, invocation: inout InvocationEncoder, throwing: Err.Type
    ) async throws where Act.ID == ActorID {
        let outcome = try await send(invocation, to: actor.id, target: target)
        if case .error(let type, let message) = outcome {
            throw RemoteCallError.remoteError(type: type, message: message, node: actor.id.node.name)
        }
    }

    private func send(
        _ invocation: InvocationEncoder, to recipient: ActorID, target: RemoteCallTarget
    ) async throws -> WireMessage.Reply.Outcome {
        let connection = try await connection(to: recipient.node)
        let id = nextCallID.wrappingAdd(1, ordering: .relaxed).oldValue
        // A peer of an older protocol knows the function (and its actor) by its release's name.
        var (name, actor) = (target.identifier, recipient.name)
        let version = agreedVersion(on: connection)
        if version < CallTargetRenames.current.since {
            (name, actor) = CallTargetRenames.current.sent(target: name, recipient: actor, version: version)
        }
        let call = WireMessage.Call(
            id: id, recipient: ActorID(node: recipient.node, name: actor), target: name,
            genericSubstitutions: invocation.genericSubstitutions, arguments: invocation.arguments)
        // The scope's deadline (``withCallDeadline(_:_:)``) when it comes first.
        let deadline = Self.callDeadline.flatMap { $0 < settings.callTimeout ? $0 : nil }
        let seconds = deadline ?? settings.callTimeout
        let clock = runtime.clock
        // The call waits in `pendingCalls` for its reply, its deadline (a timer of the
        // runtime's clock, not a task of its own: BENCHMARKS.md, "A deadline without a
        // task"), the connection's loss or the caller's cancellation, whichever comes
        // first: each ends it through `finish(call:with:)`, which resumes it once.
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { continuation in
                self.pendingCalls.withLock {
                    $0[id] = PendingCall(continuation: continuation, connection: ObjectIdentifier(connection))
                }
                // Cancelled before it was registered: the handler found nothing to end.
                if Task.isCancelled { return self.finish(call: id, with: .failure(CancellationError())) }
                let timer = clock.startTimer(after: seconds) { [identifier = target.identifier] in
                    if let deadline { return self.finish(call: id, with: .failure(TimeoutError(seconds: deadline))) }
                    let target = RemoteCallTarget(identifier).description
                    self.finish(call: id, with: .failure(RemoteCallError.timedOut(target: target, node: recipient.node.name, seconds: seconds)))
                }
                let pending = self.pendingCalls.withLock { calls -> Bool in
                    guard calls[id] != nil else { return false }
                    calls[id]?.timer = timer
                    return true
                }
                // Ended already (its deadline passed at once, or it was cancelled): nothing to send.
                guard pending else { return timer.cancel() }
                if connection.isClosed {
                    self.fail(callsOn: connection, with: .peerDisconnected(node: recipient.node.name, reason: "connection closed"))
                } else if case .tooLarge(let bytes) = connection.send(.call(call)) {
                    let reason = Connection.tooLarge("the call to \(RemoteCallTarget(target.identifier)) on \(recipient.node.name)", bytes: bytes, limit: self.settings.maximumFrameSize)
                    self.logOnce(reason, key: "too large: \(target.identifier)")
                    self.finish(call: id, with: .failure(RemoteCallError.serializationFailed(reason)))
                }
            }
        } onCancel: {
            self.finish(call: id, with: .failure(CancellationError()))
        }
    }

    /// Ends one pending call, if it is still pending, and disarms its deadline.
    private func finish(call id: UInt64, with result: Result<WireMessage.Reply.Outcome, any Error>) {
        guard let call = pendingCalls.withLock({ $0.removeValue(forKey: id) }) else { return }
        call.timer?.cancel()
        call.continuation.resume(with: result)
    }

    /// Ends every call waiting on `connection` with `error`.
    private func fail(callsOn connection: Connection, with error: RemoteCallError) {
        let key = ObjectIdentifier(connection)
        let failed = pendingCalls.withLock { calls in
            let ids = calls.filter { $0.value.connection == key }.map(\.key)
            return ids.compactMap { calls.removeValue(forKey: $0) }
        }
        for call in failed {
            call.timer?.cancel()
            call.continuation.resume(throwing: error)
        }
    }

    // MARK: - Incoming calls

    private func execute(_ call: WireMessage.Call, from connection: Connection) async {
        let reply: @Sendable (WireMessage.Reply.Outcome) -> Void = { outcome in
            connection.send(.reply(WireMessage.Reply(id: call.id, outcome: outcome)))
        }
        // A peer of an older protocol may name the function (and its actor) as its release does.
        var (target, recipient) = (call.target, call.recipient.name)
        if agreedVersion(on: connection) < CallTargetRenames.current.since {
            (target, recipient) = CallTargetRenames.current.received(target: target, recipient: recipient)
            if target != call.target { renamedCalls.withLock { $0[call.target, default: 0] += 1 } }
        }
        guard call.recipient.node == node, let entry = registry.withLock({ $0[recipient] }), let actor = entry.actor else {
            rejections.count(.unknownActor)
            reply(.error(type: "ActorNotFound", message: "no actor \(call.recipient) on \(node)"))
            return
        }
        // A function run before passed this check when it was first found.
        let known = targets.knownSignature(of: target)
        guard known != nil || ClusterInvocationDecoder.isPlainMangledName(target) else {
            reply(.error(type: "RemoteCallError", message: "the call's target is not a mangled function name"))
            return
        }
        // The runtime finds the function by name alone and runs it on whatever actor it is
        // handed: a function of another type would run on the wrong object.
        guard target.hasPrefix(entry.functionPrefix) else {
            rejections.count(.unknownActor)
            reply(.error(type: "RemoteCallError", message: "\(call.recipient) (a \(entry.typeName)) has no function \(target.prefix(200))"))
            return
        }
        do {
            try await Self.$caller.withValue(connection.peerNode) {
                var decoder = ClusterInvocationDecoder(call: call, system: self)
                let handler = ClusterResultHandler(reply: reply, rejections: rejections)
                // A function run before goes without demangling its name again (``DistributedTargets``).
                if let signature = known ?? targets.signature(of: target) {
                    try await DistributedTargets.run(signature, on: actor, target: target, decoder: &decoder, handler: handler, system: self)
                } else {
                    try await executeDistributedTarget(on: actor, target: RemoteCallTarget(target), invocationDecoder: &decoder, handler: handler)
                }
            }
        } catch {
            reply(.error(type: String(describing: type(of: error)), message: String(describing: error)))
        }
    }

    // MARK: - Connections

    /// Peers this node has a live connection to, with what their handshakes said.
    public var connectedPeers: [WireMessage.Handshake] {
        connections.withLock { $0.values.compactMap(\.peer) }.sorted { $0.node.name < $1.node.name }
    }

    /// The node named `name` this node is connected to, when it is a node (not a client),
    /// as ``connectedPeers`` lists it, without making that list or copying its handshake:
    /// for what checks a peer on every message (Raft's deliveries, each replica's outbox).
    public func connectedNode(named name: String) -> NodeID? {
        connections.withLock { $0[name]?.listeningPeerNode }.flatMap { $0.name == name ? $0 : nil }
    }

    /// The peer at `address` over a connection whose handshake finished and that is still
    /// open, if there is one.
    public func establishedPeer(at address: String) -> WireMessage.Handshake? {
        connections.withLock { connections in
            connections.values.first { !$0.isClosed && $0.peer?.address == address }?.peer
        }
    }

    /// Connections open now, handshaking or established: what hostile-input tests watch
    /// return to its baseline.
    public var openConnectionCount: Int { openConnections.withLock { $0.count } }

    /// Calls received under a name an older release gives their function
    /// (``CallTargetRenames``): how much of a rolling upgrade still calls the old way.
    public var callsReceivedUnderOldNames: Int { renamedCalls.withLock { $0.values.reduce(0, +) } }

    /// The older names calls were received under (each a function of ``CallTargetRenames``).
    public var oldNamesReceived: Set<String> { renamedCalls.withLock { Set($0.keys) } }

    /// Calls sent and still waiting for their reply.
    public var pendingCallCount: Int { pendingCalls.withLock { $0.count } }

    /// Calls received from peers that are running here now, over every connection.
    public var runningIncomingCallCount: Int {
        connections.withLock { Array($0.values) }.reduce(0) { $0 + $1.callsInFlight.load(ordering: .relaxed) }
    }

    /// Sends a heartbeat on every connection that sent nothing for a quarter interval: it
    /// refreshes the peer's `lastReceived` of this node, as any frame does, so on a busy
    /// connection it would be a frame (a write, a wake-up at the peer) for nothing. A peer
    /// still hears from this node at least every 1.25 intervals, short of the 1.5 after
    /// which it probes (``ClusterNode/probeAfter(_:)``; where settings put that sooner,
    /// fewer or no heartbeats are left out). One round in
    /// ``WireMessage/Heartbeat/acknowledgedEvery`` asks for an acknowledgement and times
    /// the round trip; those go on every connection.
    public func sendHeartbeats() {
        let sequence = heartbeatSequence.wrappingAdd(1, ordering: .relaxed).oldValue
        let beat = WireMessage.Heartbeat(sequence: sequence)
        let now = runtime.now
        let recent = min(settings.heartbeatInterval / 4, ClusterNode.probeAfter(settings) - settings.heartbeatInterval)
        // Encoded once for every connection (a heartbeat is a few bytes, but a node sends
        // one to each peer several times a second).
        var payload: [UInt8]?
        for connection in connections.withLock({ Array($0.values) }) {
            if !beat.asksForAcknowledgement, now - connection.lastSent < recent { continue }
            if beat.asksForAcknowledgement { connection.roundTrip.withLock { $0.sent(sequence: sequence, at: now) } }
            if payload == nil { payload = try? Connection.payload(of: .heartbeat(beat)) }
            if let payload { connection.send(.heartbeat(beat), payload: payload) } else { connection.send(.heartbeat(beat)) }
        }
    }

    /// The smoothed heartbeat round trip to each connected peer, in seconds, by node
    /// name (peers that have not answered a heartbeat yet are absent).
    public var heartbeatRoundTrips: [String: Double] {
        let open = connections.withLock { Array($0.values) }
        var trips: [String: Double] = [:]
        for connection in open {
            if let name = connection.peerNode?.name, let trip = connection.roundTrip.withLock({ $0.smoothed }) { trips[name] = trip }
        }
        return trips
    }

    /// The connected peers heard from since this was last asked, with when they were last
    /// heard from (monotonic seconds; ``Connection/receivedSinceAsked()``), a peer once, in
    /// no particular order. For one caller, which asks at every heartbeat tick (the node,
    /// for its membership): most ticks hear from few peers, and the rest are no news.
    public func heardSinceAsked() -> [(node: NodeID, time: Double)] {
        connections.withLock { connections in
            var heard: [(node: NodeID, time: Double)] = []
            for connection in connections.values {
                if let node = connection.peerNode, let time = connection.receivedSinceAsked() { heard.append((node, time)) }
            }
            return heard
        }
    }

    /// Closes the connection to `node`, failing its pending calls.
    public func disconnect(_ node: NodeID, reason: String) {
        let connection = connections.withLock { $0[node.name] }
        if let connection, connection.peerNode == node { connection.close(reason: reason) }
    }

    /// Connection changes, as they happen, for membership and tests.
    public func peerEventStream() -> AsyncStream<PeerEvent> {
        let (stream, continuation) = AsyncStream<PeerEvent>.makeStream()
        let key = nextPeerEventStream.add(1, ordering: .relaxed).oldValue
        peerEvents.withLock { $0[key] = continuation }
        continuation.onTermination = { [weak self] _ in self?.peerEvents.withLock { $0[key] = nil } }
        return stream
    }

    /// The open connection to `node`, dialling its address if known. Calls to a node
    /// this system has never heard of fail with ``RemoteCallError/unreachable(node:reason:)``.
    func connection(to node: NodeID) async throws -> Connection {
        if let open = connections.withLock({ $0[node.name] }), !open.isClosed {
            guard open.peerNode == node else {
                throw RemoteCallError.actorNotFound("\(node) is gone: \(node.name) now runs as \(open.peerNode?.description ?? "?")")
            }
            return open
        }
        throw RemoteCallError.unreachable(node: node.description, reason: "no connection")
    }

    /// The protocol version agreed on the connection to `node` (the highest both speak),
    /// or nil when there is no connection to it: what behaviour between this node and
    /// that one alone may use. Behaviour every member must understand asks
    /// ``ClusterNode/mayUse(protocolVersion:)``.
    /// The protocol version `connection` agreed in its handshake (this node's highest
    /// before the handshake ends).
    private func agreedVersion(on connection: Connection) -> Int {
        let agreed = connection.agreedVersion.load(ordering: .acquiring)
        return agreed > 0 ? agreed : settings.protocolVersions.highest
    }

    public func protocolVersion(with node: NodeID) -> Int? {
        guard let connection = connections.withLock({ $0[node.name] }), !connection.isClosed, let peer = connection.peer, peer.node == node
        else { return nil }
        return settings.protocolVersions.agreed(with: peer.protocolVersions)
    }

    /// Dials `address`, runs the handshake (see ``HandshakeAuthentication``), and
    /// registers the connection. Returns the peer's handshake. (A socket's connect waits
    /// on a thread of its own, never on the cooperative pool.)
    @discardableResult
    public func join(_ address: SocketAddress) async throws -> WireMessage.Handshake {
        guard !isShutDown.load(ordering: .acquiring) else {
            throw RemoteCallError.unreachable(node: address.description, reason: "\(node.name) is shut down")
        }
        let timeout = settings.handshakeTimeout
        let limits = Connection.Limits(settings)
        let rejections = rejections
        let stream = try await runtime.network.connect(to: address, timeout: timeout)
        let connection = Connection(
            stream: stream, isOutbound: true, limits: limits, rejections: rejections, clock: runtime.clock, keyring: keyring, traffic: traffic)
        let (dialling, opening) = HandshakeStateMachine.dialling(
            handshake(nonce: HandshakeAuthentication.makeNonce()), to: address.description, authentication: connection.handshakeKey?.handshake)
        let machine = Mutex(dialling)
        let welcomed = Promise<WireMessage.Handshake, RemoteCallError>()
        track(connection)
        connection.start(Connection.Handlers(
            onMessage: { [weak self] connection, message in
                guard let self else { return }
                // Past the handshake, every message is delivered: no list of actions made per frame.
                if machine.withLock({ $0.isEstablished }) { return self.handle(message, on: connection) }
                let actions = machine.withLock { $0.receive(message, refusal: self.refusal(of:)) }
                self.carryOut(actions, on: connection, joining: welcomed)
            },
            onClose: { [weak self] connection, reason in
                let actions = machine.withLock { $0.connectionClosed(reason: reason, byPeer: reason == Connection.peerClosedReason) }
                self?.carryOut(actions, on: connection, joining: welcomed)
                welcomed.reject(.unreachable(node: address.description, reason: reason))
                self?.closed(connection, reason: reason)
            }))
        carryOut(opening, on: connection, joining: welcomed)
        do {
            return try await withTimeout(seconds: timeout, clock: runtime.clock) { try await welcomed.future.value }
        } catch {
            carryOut(machine.withLock { $0.timedOut(after: timeout) }, on: connection, joining: welcomed)
            connection.close(reason: "handshake failed: \(error)")
            throw error is TimeoutError ? RemoteCallError.unreachable(node: address.description, reason: "no handshake within \(timeout) s") : error
        }
    }

    /// Carries out a handshake's actions on `connection`, in order (see
    /// ``HandshakeStateMachine``); `joining` is a dialler's join, resolved once the
    /// connection is established. Runs on the connection's reader thread (or the
    /// caller's, for the first hello and the timeout).
    private func carryOut(
        _ actions: [HandshakeStateMachine.Action], on connection: Connection, joining: Promise<WireMessage.Handshake, RemoteCallError>? = nil
    ) {
        for action in actions {
            switch action {
            case .send(let message):
                connection.send(message)
            case .refuse(let refusal, let peer):
                // Once per address and reason: a refused node redials every second.
                logOnce("refused \(peer) from \(connection.remoteAddress.host): \(refusal.reason)")
                connection.send(.refused(refusal), thenCloseWithReason: "refused: \(refusal.reason)")
            case .establish(let peer, let seal, let proof):
                connection.peer = peer
                connection.agreedVersion.store(settings.protocolVersions.agreed(with: peer.protocolVersions) ?? 0, ordering: .releasing)
                connection.establish(opening: seal)
                if let proof { connection.send(.proof(proof)) }
                connection.sealSends(with: seal)
                // Registered before the join resolves: its caller may call the peer at once.
                register(connection)
                joining?.resolve(peer)
            case .close(let reason, let rejection):
                if let rejection {
                    connection.close(reason: reason, rejecting: rejection)
                } else {
                    connection.close(reason: reason)
                }
            case .count(let rejection):
                rejections.count(rejection)
                if rejection == .handshakeAbandoned {
                    logOnce("\(connection.remoteAddress.host) hung up during the handshake, after our proof: is its secret the same as ours?")
                }
            case .fail(let error):
                joining?.reject(error)
            case .nameTaken(let holder):
                if isMember { emit(.nameTaken(NameConflict(name: node.name, address: holder))) }
            case .deliver(let message):
                handle(message, on: connection)
            }
        }
    }

    /// This node's handshake, with `nonce` (empty for beacons).
    func handshake(nonce: String = "") -> WireMessage.Handshake {
        WireMessage.Handshake(
            protocolVersions: settings.protocolVersions, cluster: isMember || !settings.joinsAnyCluster ? settings.cluster : "", node: node, address: isMember ? advertisedAddress.description : "",
            slots: isMember ? settings.slots : 0, waitingSlots: isMember ? settings.waitingSlots : 0, authenticated: keyring != nil, nonce: nonce)
    }

    /// Admits an inbound connection, as a stranger: it has `limits.handshake_timeout` to
    /// prove itself. Strangers have a budget of their own, apart from members and clients:
    /// at most `maximumHandshakingConnections` at once, and when that is full the oldest
    /// handshaking connection of the address with the most of them is closed to make
    /// room. So a flood of half-open connections (all from 127.0.0.1, say) churns through
    /// that budget while an honest handshake, done in milliseconds, gets through; and the
    /// caps on established connections (`limits.max_connections` in all,
    /// `limits.max_connections_per_address` from one address) count only connections
    /// that proved themselves, so strangers never use them up.
    private func accept(_ stream: any ByteStream) {
        let remote = stream.remoteAddress
        let (established, fromAddress, crowdedOut) = openConnections.withLock { connections in
            let inbound = connections.filter { !$0.isOutbound }
            let proven = inbound.filter { $0.peer != nil }
            let handshaking = inbound.filter { $0.peer == nil }
            var crowdedOut: Connection?
            if handshaking.count >= settings.maximumHandshakingConnections {
                let busiest = Dictionary(grouping: handshaking, by: \.remoteAddress.host).max { $0.value.count < $1.value.count }
                crowdedOut = busiest?.value.min { $0.opened < $1.opened }
            }
            return (proven.count, proven.count { $0.remoteAddress.host == remote.host }, crowdedOut)
        }
        if established >= settings.maximumConnections || fromAddress >= settings.maximumConnectionsPerAddress {
            let perAddress = fromAddress >= settings.maximumConnectionsPerAddress
            rejections.count(perAddress ? .tooManyConnectionsFromAddress : .tooManyConnections)
            logOnce("turned away a connection from \(remote.host): " + (perAddress
                ? "\(fromAddress) connections from that address is the limit (limits.max_connections_per_address)"
                : "\(established) open connections is the limit (limits.max_connections)"))
            stream.close()
            return
        }
        crowdedOut?.close(reason: "\(settings.maximumHandshakingConnections) connections were handshaking: the oldest made room", rejecting: .tooManyHandshakes)
        let connection = Connection(
            stream: stream, isOutbound: false, limits: Connection.Limits(settings), rejections: rejections, clock: runtime.clock, keyring: keyring,
            traffic: traffic)
        let machine = Mutex(HandshakeStateMachine.accepting(
            from: remote.description, welcome: handshake(nonce: HandshakeAuthentication.makeNonce()), authentication: keyring?.primary.handshake))
        track(connection)
        connection.start(Connection.Handlers(
            onMessage: { [weak self] connection, message in
                guard let self else { return }
                if machine.withLock({ $0.isEstablished }) { return self.handle(message, on: connection) }
                let actions = machine.withLock { machine in
                    // The secret the hello opened with proves us and checks the dialler.
                    if let key = connection.handshakeKey { machine.authenticate(with: key.handshake) }
                    return machine.receive(message, refusal: self.refusal(of:))
                }
                self.carryOut(actions, on: connection)
            },
            onClose: { [weak self] connection, reason in
                let actions = machine.withLock { $0.connectionClosed(reason: reason, byPeer: reason == Connection.peerClosedReason) }
                self?.carryOut(actions, on: connection)
                self?.closed(connection, reason: reason)
            }))
        let deadline = settings.handshakeTimeout
        let runtime = runtime
        Task { [weak self, weak connection] in
            try? await runtime.sleep(for: deadline)
            guard let self, let connection, !connection.isClosed else { return }
            self.carryOut(machine.withLock { $0.timedOut(after: deadline) }, on: connection)
        }
    }

    /// Why a peer's handshake is not acceptable, or nil.
    private func refusal(of peer: WireMessage.Handshake) -> WireMessage.Refusal? {
        func refused(_ reason: String) -> WireMessage.Refusal { WireMessage.Refusal(reason: reason) }
        let peerName = peer.address.isEmpty ? "this client (\(peer.node.name))" : "node \(peer.node.name)"
        if let mismatch = settings.protocolVersions.refusal(of: peer.protocolVersions, peer: peerName, local: "node \(node.name)") {
            return refused(mismatch)
        }
        // A client that names a node but no cluster says cluster "" (see ClusterSettings.joinsAnyCluster).
        let anyCluster = (peer.cluster.isEmpty && peer.address.isEmpty) || (!isMember && settings.joinsAnyCluster)
        if peer.cluster != settings.cluster, !anyCluster {
            return refused("\(node.name) is a node of cluster '\(settings.cluster)', not '\(peer.cluster)'")
        }
        do {
            try peer.checkRanges()
        } catch {
            return refused("\(error)")
        }
        let them = peer.address.isEmpty ? "this client" : peer.node.name
        if let conflict = nameConflict(with: peer) { return conflict }
        if peer.authenticated, keyring == nil {
            return refused("\(them) has a cluster secret and node \(node.name) of cluster '\(settings.cluster)' has none; give both the same secret, or neither")
        }
        if !peer.authenticated, keyring != nil {
            return refused("cluster '\(settings.cluster)' (node \(node.name)) requires its secret (SPOKES_SECRET or secret_file) and \(them) has none")
        }
        if peer.nonce.utf8.count != 2 * HandshakeAuthentication.nonceSize {
            return refused("the handshake's nonce is not \(HandshakeAuthentication.nonceSize) bytes of hex")
        }
        return nil
    }

    /// The refusal of a member `peer` whose name a live node holds (see ``NameConflict``):
    /// this node, or a member this node is connected to and heard from within the suspect
    /// timeout. Of this node and a peer with its name, the one that started first keeps
    /// it; when that is the peer, this node yields (a ``PeerEvent/nameTaken(_:)`` event).
    private func nameConflict(with peer: WireMessage.Handshake) -> WireMessage.Refusal? {
        guard isMember, !peer.address.isEmpty else { return nil }
        if peer.node.name == node.name {
            guard peer.node != node else { return nil }
            if peer.node.incarnation < node.incarnation {
                emit(.nameTaken(NameConflict(name: node.name, address: peer.address)))
                return WireMessage.Refusal(reason: "\(node) started after \(peer.node) at \(peer.address), which keeps the name '\(node.name)'; \(node) stops")
            }
            return WireMessage.Refusal(reason: NameConflict(name: node.name, address: address.description).description, nameTakenAt: address.description)
        }
        guard let holder = connections.withLock({ $0[peer.node.name] }), !holder.isClosed, let held = holder.peer,
              held.node != peer.node, runtime.now - holder.lastReceived < settings.suspectTimeout else { return nil }
        return WireMessage.Refusal(reason: NameConflict(name: held.node.name, address: held.address).description, nameTakenAt: held.address)
    }

    /// Counts `rejection` and closes `connection` for a protocol violation.
    private func violation(_ rejection: Rejection, on connection: Connection, _ detail: String) {
        connection.close(reason: "protocol violation: \(detail)", rejecting: rejection)
    }

    /// Logs `line` unless a line with the same `key` was logged before (peers redial;
    /// strangers repeat). Remembers at most 1,000 keys, then logs no more of them.
    private func logOnce(_ line: String, key: String? = nil) {
        if loggedLines.withLock({ $0.count < 1000 && $0.insert(key ?? line).inserted }) { log(line) }
    }

    /// Registers a connection whose handshake is done, settling dial races. The losing
    /// connection of a race is closed only after the handshake window, so the join that
    /// made it still completes.
    private func register(_ connection: Connection) {
        guard let peer = connection.peer else { return }
        let keys = keyring?.keyring
        /// How current a connection's secret is: the primary's 2, another installed one's
        /// 1, a removed one's 0. When a secret is removed every node already seals with
        /// the new primary ('use' comes first), so both ends of a replaced connection rank
        /// it alike and keep the same one.
        func currency(_ connection: Connection) -> Int {
            guard let keys, let key = connection.handshakeKey else { return 2 }
            return key.secret == keys.primary ? 2 : keys.secrets.contains(key.secret) ? 1 : 0
        }
        let (loser, replaced): (Connection?, Connection?) = connections.withLock { connections in
            guard let existing = connections[peer.node.name], !existing.isClosed, existing !== connection else {
                connections[peer.node.name] = connection
                return (nil, nil)
            }
            if existing.peerNode != peer.node {
                connections[peer.node.name] = connection
                return (nil, existing)
            }
            // A connection sealed with a secret since removed (or no longer primary) gives
            // way to one sealed with the primary.
            if currency(existing) != currency(connection) {
                if currency(existing) > currency(connection) { return (connection, nil) }
                connections[peer.node.name] = connection
                return (existing, nil)
            }
            let existingDialler = existing.isOutbound ? node.name : peer.node.name
            let newDialler = connection.isOutbound ? node.name : peer.node.name
            if newDialler < existingDialler {
                connections[peer.node.name] = connection
                return (existing, nil)
            }
            return (connection, nil)
        }
        if let loser { retire(loser, reason: "duplicate connection to \(peer.node.name)") }
        replaced?.close(reason: "\(peer.node.name) restarted as \(peer.node)")
        if loser !== connection { emit(.connected(peer)) }
    }

    /// The fingerprint of the secret each registered connection's handshake used, by
    /// peer name (none in an open cluster).
    var registeredConnectionSecrets: [String: String] {
        connections.withLock { $0.compactMapValues { $0.handshakeKey?.secret.fingerprint } }
    }

    /// After a keyring change: every connection whose handshake used a secret no longer
    /// installed is replaced, without failing a call. A member's is dialled again (under
    /// the primary), and the fresh connection retires the old one as a dial race's loser
    /// is retired; a client's (which has no address to dial) and one still handshaking
    /// are retired at once. So a removed secret opens nothing from then on, and no member
    /// is judged on the way.
    private func replaceConnections(sealedWithout keyring: Keyring) {
        let stale = openConnections.withLock { $0.filter { connection in
            !connection.isClosed && connection.handshakeKey.map { !keyring.secrets.contains($0.secret) } == true
        } }
        for connection in stale {
            let registered = connection.peer.map { peer in connections.withLock { $0[peer.node.name] === connection } } ?? false
            guard registered, let peer = connection.peer, !peer.address.isEmpty, let address = try? SocketAddress(parsing: peer.address) else {
                retire(connection, reason: "its secret was removed from the keyring")
                continue
            }
            Task { [weak self] in
                do {
                    _ = try await self?.join(address)
                } catch {
                    self?.log("after a keyring change, \(peer.node.name) could not be dialled again: \(error)", level: .warning)
                    self?.retire(connection, reason: "its secret was removed from the keyring")
                }
            }
        }
    }

    /// Closes `connection`, the loser of a dial race (both sides pick the same winner),
    /// without failing a call (issue 21 §2): new calls already go over the winner, so it
    /// waits (after the handshake timeout, which lets both handshakes finish) until no
    /// call it sent awaits a reply and no call it received still runs here (the peer's
    /// calls over it are answered), then closes once the replies are written. A call
    /// that outlasts the wait (at most the call timeout, capped at 10 minutes) fails as
    /// before.
    private func retire(_ connection: Connection, reason: String) {
        let settle = settings.handshakeTimeout
        let bound = min(max(settings.callTimeout, settle), 600)
        Task { [weak self] in
            guard let runtime = self?.runtime else { return }
            try? await runtime.sleep(for: settle)
            let deadline = runtime.now + bound
            while let self, !connection.isClosed, runtime.now < deadline,
                  connection.callsInFlight.load(ordering: .relaxed) > 0 || self.hasPendingCalls(on: connection) {
                try? await runtime.sleep(for: 0.02)
            }
            connection.closeAfterQueuedWrites(reason: reason)
        }
    }

    /// Whether a call sent over `connection` still awaits its reply.
    private func hasPendingCalls(on connection: Connection) -> Bool {
        let key = ObjectIdentifier(connection)
        return pendingCalls.withLock { calls in calls.values.contains { $0.connection == key } }
    }

    /// A message on an established connection. Runs on the connection's reader thread.
    private func handle(_ message: WireMessage, on connection: Connection) {
        switch message {
        case .call(let call):
            guard connection.callsInFlight.wrappingAdd(1, ordering: .relaxed).newValue <= settings.maximumCallsPerConnection else {
                connection.callsInFlight.wrappingSubtract(1, ordering: .relaxed)
                rejections.count(.tooManyCalls)
                connection.send(.reply(WireMessage.Reply(id: call.id, outcome: .error(
                    type: "TooManyCalls", message: "\(settings.maximumCallsPerConnection) calls are already running for this connection on \(node.name) (limits.max_calls_per_connection)"))))
                return
            }
            // A worker's task call dies with its connection (nobody can take its result); a
            // job's submission does not (a job outlives its client, which may cancel it
            // from anywhere with `spokes cancel`).
            guard call.recipient.name == ScanSystem.wellKnownName else {
                Task.preferring(executor(forCallsTo: call.recipient)) {
                    await self.execute(call, from: connection)
                    connection.callsInFlight.wrappingSubtract(1, ordering: .relaxed)
                }
                return
            }
            // Registered before it can run, so a close that comes first still finds it.
            let key = ObjectIdentifier(connection)
            let number = incomingCallNumber.wrappingAdd(1, ordering: .relaxed).oldValue
            incomingCalls.withLock { calls in
                let task = Task {
                    await self.execute(call, from: connection)
                    connection.callsInFlight.wrappingSubtract(1, ordering: .relaxed)
                    self.incomingCalls.withLock { _ = $0[key]?.removeValue(forKey: number) }
                }
                calls[key, default: [:]][number] = task
            }
            if connection.isClosed { cancelCalls(receivedOn: connection) }
        case .reply(let reply):
            finish(call: reply.id, with: .success(reply.outcome))
        case .batch(let messages):
            // Only where the handshake agreed it; its members (calls and replies, checked
            // when it was decoded) each as if it had come alone.
            let version = connection.agreedVersion.load(ordering: .acquiring)
            guard version >= ProtocolVersions.batching else {
                return violation(.malformedFrame, on: connection, "\(connection) sent a batch on a connection of protocol \(version), which has none")
            }
            for message in messages where !connection.isClosed { handle(message, on: connection) }
        case .heartbeat(let beat):
            if beat.asksForAcknowledgement { connection.send(.heartbeatAck(beat)) }
        case .heartbeatAck(let beat):
            let now = runtime.now
            connection.roundTrip.withLock { _ = $0.acknowledged(sequence: beat.sequence, at: now) }
        case .leave:
            if let peer = connection.peer { leaving(peer.node) }
            connection.close(reason: "peer left")
        case .hello, .welcome, .proof, .refused:
            violation(.malformedFrame, on: connection, "\(message.kind) after the handshake")
        case .unknown(let type):
            rejections.count(.unknownMessageType)
            connection.send(.unsupported(WireMessage.Refusal(reason: "\(node.name) does not know message type '\(type)'")))
        case .unsupported(let refusal):
            logOnce("\(connection) did not understand a message: \(refusal.reason)")
        }
    }

    /// `node` said it leaves: its registered connection is taken out before anyone hears
    /// `left` (so its name is free the moment it is gone) and closed without a
    /// `disconnected` event (a goodbye, not a drop).
    private func leaving(_ node: NodeID) {
        let registered = connections.withLock { connections -> Connection? in
            guard let existing = connections[node.name], existing.peerNode == node else { return nil }
            connections[node.name] = nil
            return existing
        }
        emit(.left(node))
        registered?.close(reason: "peer left")
    }

    /// Remembers an open connection until it closes.
    private func track(_ connection: Connection) {
        openConnections.withLock { $0.append(connection) }
    }

    private func closed(_ connection: Connection, reason: String) {
        openConnections.withLock { $0.removeAll { $0 === connection } }
        if let rejection = connection.rejection {
            let host = connection.remoteAddress.host
            // Named by its node once its handshake said it (`NAME at HOST:PORT`).
            logOnce("closed the connection from \(connection.peer == nil ? host : connection.description) (\(rejection.rawValue)): \(reason)",
                    key: "\(host) \(rejection.rawValue)")
        }
        let node = connection.peerNode
        let wasRegistered = connections.withLock { connections in
            guard let node, connections[node.name] === connection else { return false }
            connections[node.name] = nil
            return true
        }
        fail(callsOn: connection, with: .peerDisconnected(node: node?.name ?? connection.remoteAddress.description, reason: reason))
        cancelCalls(receivedOn: connection)
        if wasRegistered, let node { emit(.disconnected(node, reason: reason)) }
    }

    /// Cancels the worker calls that arrived on `connection` and still run here: nobody
    /// can read their replies any more, and the slot each holds frees at once instead of
    /// at the end of its task (issue 21 §2).
    private func cancelCalls(receivedOn connection: Connection) {
        let running = incomingCalls.withLock { $0.removeValue(forKey: ObjectIdentifier(connection)) } ?? [:]
        for task in running.values { task.cancel() }
    }

    private func emit(_ event: PeerEvent) {
        let streams = peerEvents.withLock { $0.sorted { $0.key < $1.key }.map(\.value) }
        for stream in streams { stream.yield(event) }
    }

    /// Logs one line to this node's ``logger``.
    public func log(_ text: String, level: LogLevel = .info) {
        logger.log(level, text)
    }
}

/// A change in this node's connections to its peers.
public enum PeerEvent: Sendable, Equatable {
    case connected(WireMessage.Handshake)
    case disconnected(NodeID, reason: String)
    case left(NodeID)
    /// A live member of the cluster has this node's name, and keeps it: this node must stop.
    case nameTaken(NameConflict)
}

/// A call waiting for its reply.
private struct PendingCall: Sendable {
    /// Resumed exactly once: only by whoever takes the call out of `pendingCalls` under
    /// its lock (`finish(call:with:)`: a reply, the deadline, the caller's cancellation;
    /// `fail(callsOn:with:)`: the connection's loss), and nothing puts it back. So
    /// unsafe, not checked: a checked one costs an allocation per call.
    let continuation: UnsafeContinuation<WireMessage.Reply.Outcome, any Error>
    let connection: ObjectIdentifier
    /// Its deadline, armed just after it is registered (nil for that moment).
    var timer: ClockTimer?
}

/// A registry entry that does not keep its actor alive.
private final class WeakActor: Sendable {
    private let reference: Mutex<WeakReference>
    /// How the names of the actor type's distributed functions begin: `$s` and the type's
    /// mangled name (`$s13SpokesCluster10NodeStatusC`).
    let functionPrefix: String
    private let type: any DistributedActor.Type

    init(_ actor: any DistributedActor) {
        reference = Mutex(WeakReference(actor: actor))
        type = Swift.type(of: actor)
        functionPrefix = "$s" + (_mangledTypeName(type) ?? "")
    }

    /// The actor's type, for messages: made only when one is written (as
    /// `String(describing:)` names it, without its search of the metatype's conformances).
    var typeName: String { _typeName(type, qualified: false) }

    var actor: (any DistributedActor)? { reference.withLock { $0.actor } }

    private struct WeakReference {
        weak var actor: (any DistributedActor)?
    }
}

extension WireMessage {
    /// The message's type name, for logs and errors.
    public var kind: String {
        switch self {
        case .hello: "hello"
        case .welcome: "welcome"
        case .proof: "proof"
        case .unsupported: "unsupported"
        case .unknown(let type): "unknown type '\(type)'"
        case .refused: "refused"
        case .call: "call"
        case .reply: "reply"
        case .batch: "batch"
        case .heartbeat: "heartbeat"
        case .heartbeatAck: "heartbeatAck"
        case .leave: "leave"
        }
    }
}
