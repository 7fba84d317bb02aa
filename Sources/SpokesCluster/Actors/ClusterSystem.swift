import Distributed
import Foundation
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

    public let node: NodeID
    public let settings: ClusterSettings
    /// Where this node accepts connections.
    public let address: SocketAddress

    private let listener: Listener
    private let registry = Mutex<[String: WeakActor]>([:])
    private let connections = Mutex<[String: Connection]>([:])
    /// Every open connection, registered or not (handshaking, or the loser of a dial
    /// race): shutdown closes them all.
    private let openConnections = Mutex<[ObjectIdentifier: Connection]>([:])
    private let pendingCalls = Mutex<[UInt64: PendingCall]>([:])
    private let nextCallID = Atomic<UInt64>(1)
    private let loggedRefusals = Mutex<Set<String>>([])
    private let nextActorNumber = Atomic<UInt64>(1)
    private let peerEvents = Mutex<[UUID: AsyncStream<PeerEvent>.Continuation]>([:])

    /// False for a client (`spokes status`, `spokes submit`): it listens only for its own
    /// replies and its handshake says so (empty address, no slots), so nodes do not
    /// count it as a member.
    public let isMember: Bool
    private let heartbeatSequence = Atomic<UInt64>(0)

    /// Starts a node: binds its listener and begins accepting peers.
    public init(settings: ClusterSettings, isMember: Bool = true) throws {
        self.isMember = isMember
        var settings = settings
        if settings.nodeName.isEmpty { settings.nodeName = "node-\(String(UInt32.random(in: 0...UInt32.max), radix: 36))" }
        self.settings = settings
        node = NodeID(name: settings.nodeName, incarnation: NodeID.nextIncarnation())
        listener = try Listener(address: SocketAddress(host: settings.host, port: settings.port))
        address = listener.address
        listener.start { [weak self] fd, remote in
            guard let self else { Glibc.close(fd); return }
            self.accept(fd: fd, remote: remote)
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
        DispatchQueue.global().async {
            for connection in open { connection.drainWrites() }
            flushed.resolve(())
        }
        _ = try? await withTimeout(seconds: seconds) { await flushed.future.value }
    }

    private func leaveAll() -> [Connection] {
        listener.stop()
        connections.withLock { $0.removeAll() }
        let open = openConnections.withLock { Array($0.values) }
        for connection in open {
            connection.send(.leave, thenCloseWithReason: "\(node.name) is shutting down")
        }
        // Finish outside the lock: finishing runs onTermination, which takes it.
        let finishing = peerEvents.withLock { streams in
            defer { streams.removeAll() }
            return Array(streams.values)
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
            let decoder = JSONDecoder()
            decoder.userInfo[.actorSystemKey] = self
            do {
                return try decoder.decode(Res.self, from: Data(text.utf8))
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
        let call = WireMessage.Call(
            id: id, recipient: recipient, target: target.identifier,
            genericSubstitutions: invocation.genericSubstitutions, arguments: invocation.arguments)
        let seconds = settings.callTimeout
        do {
            return try await TimeoutTask(seconds: seconds) {
                try await withTaskCancellationHandler {
                    try await withCheckedThrowingContinuation { continuation in
                        self.pendingCalls.withLock {
                            $0[id] = PendingCall(continuation: continuation, connection: ObjectIdentifier(connection))
                        }
                        if connection.isClosed {
                            self.fail(callsOn: connection, with: .peerDisconnected(node: recipient.node.name, reason: "connection closed"))
                        } else {
                            connection.send(.call(call))
                        }
                    }
                } onCancel: {
                    self.finish(call: id, with: .failure(CancellationError()))
                }
            }.value
        } catch is TimeoutError {
            throw RemoteCallError.timedOut(target: target.description, node: recipient.node.name, seconds: seconds)
        }
    }

    /// Ends one pending call, if it is still pending.
    private func finish(call id: UInt64, with result: Result<WireMessage.Reply.Outcome, any Error>) {
        pendingCalls.withLock { $0.removeValue(forKey: id) }?.continuation.resume(with: result)
    }

    /// Ends every call waiting on `connection` with `error`.
    private func fail(callsOn connection: Connection, with error: RemoteCallError) {
        let key = ObjectIdentifier(connection)
        let failed = pendingCalls.withLock { calls in
            let ids = calls.filter { $0.value.connection == key }.map(\.key)
            return ids.compactMap { calls.removeValue(forKey: $0) }
        }
        for call in failed { call.continuation.resume(throwing: error) }
    }

    // MARK: - Incoming calls

    private func execute(_ call: WireMessage.Call, from connection: Connection) async {
        let reply: @Sendable (WireMessage.Reply.Outcome) -> Void = { outcome in
            connection.send(.reply(WireMessage.Reply(id: call.id, outcome: outcome)))
        }
        guard call.recipient.node == node, let actor = registry.withLock({ $0[call.recipient.name]?.actor }) else {
            reply(.error(type: "ActorNotFound", message: "no actor \(call.recipient) on \(node)"))
            return
        }
        var decoder = ClusterInvocationDecoder(call: call, system: self)
        do {
            try await executeDistributedTarget(
                on: actor, target: RemoteCallTarget(call.target), invocationDecoder: &decoder,
                handler: ClusterResultHandler(reply: reply))
        } catch {
            reply(.error(type: String(describing: type(of: error)), message: String(describing: error)))
        }
    }

    // MARK: - Connections

    /// Peers this node has a live connection to, with what their handshakes said.
    public var connectedPeers: [WireMessage.Handshake] {
        connections.withLock { $0.values.compactMap(\.peer) }.sorted { $0.node.name < $1.node.name }
    }

    /// Calls sent and still waiting for their reply.
    public var pendingCallCount: Int { pendingCalls.withLock { $0.count } }

    /// Sends a heartbeat on every connection; the peer's acknowledgement (like any other
    /// message) refreshes the connection's `lastReceived`.
    public func sendHeartbeats() {
        let sequence = heartbeatSequence.wrappingAdd(1, ordering: .relaxed).oldValue
        for connection in connections.withLock({ Array($0.values) }) {
            connection.send(.heartbeat(WireMessage.Heartbeat(sequence: sequence)))
        }
    }

    /// When each connected peer was last heard from (monotonic seconds).
    public var lastHeard: [NodeID: Double] {
        connections.withLock { connections in
            var heard: [NodeID: Double] = [:]
            for connection in connections.values {
                if let node = connection.peer?.node { heard[node] = connection.lastReceived }
            }
            return heard
        }
    }

    /// Closes the connection to `node`, failing its pending calls.
    public func disconnect(_ node: NodeID, reason: String) {
        let connection = connections.withLock { $0[node.name] }
        if let connection, connection.peer?.node == node { connection.close(reason: reason) }
    }

    /// Connection changes, as they happen, for membership and tests.
    public func peerEventStream() -> AsyncStream<PeerEvent> {
        let (stream, continuation) = AsyncStream<PeerEvent>.makeStream()
        let key = UUID()
        peerEvents.withLock { $0[key] = continuation }
        continuation.onTermination = { [weak self] _ in self?.peerEvents.withLock { $0[key] = nil } }
        return stream
    }

    /// The open connection to `node`, dialling its address if known. Calls to a node
    /// this system has never heard of fail with ``RemoteCallError/unreachable(node:reason:)``.
    func connection(to node: NodeID) async throws -> Connection {
        if let open = connections.withLock({ $0[node.name] }), !open.isClosed {
            guard open.peer?.node == node else {
                throw RemoteCallError.actorNotFound("\(node) is gone: \(node.name) now runs as \(open.peer?.node.description ?? "?")")
            }
            return open
        }
        throw RemoteCallError.unreachable(node: node.description, reason: "no connection")
    }

    /// Dials `address`, exchanges handshakes, and registers the connection. Returns the
    /// peer's handshake. Blocking socket work runs on a dispatch queue, never on the
    /// cooperative pool.
    @discardableResult
    public func join(_ address: SocketAddress) async throws -> WireMessage.Handshake {
        let timeout = settings.handshakeTimeout
        let maximumFrameSize = settings.maximumFrameSize
        let connection: Connection = try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                do {
                    let fd = try Socket.connect(to: address, timeout: timeout)
                    continuation.resume(returning: Connection(fd: fd, remoteAddress: address, isOutbound: true, maximumFrameSize: maximumFrameSize))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
        let welcome = Promise<WireMessage.Handshake, RemoteCallError>()
        track(connection)
        connection.start(Connection.Handlers(
            onMessage: { [weak self] connection, message in
                guard let self else { return }
                switch message {
                case .welcome(let handshake):
                    connection.peer = handshake
                    // Register before resolving: the caller may call the peer as soon as join returns.
                    self.register(connection)
                    welcome.resolve(handshake)
                case .refused(let refusal):
                    welcome.reject(.unreachable(node: address.description, reason: "refused: \(refusal.reason)"))
                    connection.close(reason: "refused by peer: \(refusal.reason)")
                default:
                    self.handle(message, on: connection)
                }
            },
            onClose: { [weak self] connection, reason in
                welcome.reject(.unreachable(node: address.description, reason: reason))
                self?.closed(connection, reason: reason)
            }))
        connection.send(.hello(handshake))
        do {
            return try await withTimeout(seconds: timeout) { try await welcome.future.value }
        } catch {
            connection.close(reason: "handshake failed: \(error)")
            throw error is TimeoutError ? RemoteCallError.unreachable(node: address.description, reason: "no handshake within \(timeout) s") : error
        }
    }

    private var handshake: WireMessage.Handshake {
        WireMessage.Handshake(
            cluster: settings.cluster, node: node, address: isMember ? address.description : "",
            slots: isMember ? settings.slots : 0)
    }

    private func accept(fd: Int32, remote: SocketAddress) {
        let connection = Connection(fd: fd, remoteAddress: remote, isOutbound: false, maximumFrameSize: settings.maximumFrameSize)
        track(connection)
        connection.start(Connection.Handlers(
            onMessage: { [weak self] connection, message in
                guard let self else { return }
                if case .hello(let hello) = message {
                    self.greet(connection, hello: hello)
                } else if connection.peer == nil {
                    connection.close(reason: "protocol violation: \(message.kind) before the handshake")
                } else {
                    self.handle(message, on: connection)
                }
            },
            onClose: { [weak self] connection, reason in self?.closed(connection, reason: reason) }))
        let deadline = settings.handshakeTimeout
        DispatchQueue.global().asyncAfter(deadline: .now() + deadline) { [weak connection] in
            if let connection, connection.peer == nil { connection.close(reason: "no handshake within \(deadline) s") }
        }
    }

    private func greet(_ connection: Connection, hello: WireMessage.Handshake) {
        if let problem = refusal(of: hello) {
            // Once per node and reason: a refused node redials every second.
            let line = "refused \(hello.node) from \(connection.remoteAddress.host): \(problem)"
            if loggedRefusals.withLock({ $0.insert(line).inserted }) { log(line) }
            connection.send(.refused(WireMessage.Refusal(reason: problem)), thenCloseWithReason: "refused: \(problem)")
            return
        }
        connection.peer = hello
        connection.send(.welcome(handshake))
        register(connection)
    }

    private func refusal(of hello: WireMessage.Handshake) -> String? {
        if hello.protocolVersion != WireMessage.protocolVersion {
            return "protocol version \(hello.protocolVersion) is not \(WireMessage.protocolVersion)"
        }
        if hello.cluster != settings.cluster {
            return "cluster '\(hello.cluster)' is not '\(settings.cluster)'"
        }
        if hello.node.name == node.name, hello.node != node {
            return "node name '\(hello.node.name)' is already taken by this node"
        }
        return nil
    }

    /// Registers a connection whose handshake is done, settling dial races. The losing
    /// connection of a race is closed only after the handshake window, so the join that
    /// made it still completes.
    private func register(_ connection: Connection) {
        guard let peer = connection.peer else { return }
        let (loser, replaced): (Connection?, Connection?) = connections.withLock { connections in
            guard let existing = connections[peer.node.name], !existing.isClosed, existing !== connection else {
                connections[peer.node.name] = connection
                return (nil, nil)
            }
            if existing.peer?.node != peer.node {
                connections[peer.node.name] = connection
                return (nil, existing)
            }
            let existingDialler = existing.isOutbound ? node.name : peer.node.name
            let newDialler = connection.isOutbound ? node.name : peer.node.name
            if newDialler < existingDialler {
                connections[peer.node.name] = connection
                return (existing, nil)
            }
            return (connection, nil)
        }
        if let loser {
            DispatchQueue.global().asyncAfter(deadline: .now() + settings.handshakeTimeout) {
                loser.close(reason: "duplicate connection to \(peer.node.name)")
            }
        }
        replaced?.close(reason: "\(peer.node.name) restarted as \(peer.node)")
        if loser !== connection { emit(.connected(peer)) }
    }

    private func handle(_ message: WireMessage, on connection: Connection) {
        switch message {
        case .call(let call):
            Task { await self.execute(call, from: connection) }
        case .reply(let reply):
            finish(call: reply.id, with: .success(reply.outcome))
        case .heartbeat(let beat):
            connection.send(.heartbeatAck(beat))
        case .heartbeatAck:
            break
        case .leave:
            if let peer = connection.peer { emit(.left(peer.node)) }
            connection.close(reason: "peer left")
        case .hello, .welcome, .refused:
            connection.close(reason: "protocol violation: \(message.kind) after the handshake")
        }
    }

    /// Remembers an open connection until it closes.
    private func track(_ connection: Connection) {
        openConnections.withLock { $0[ObjectIdentifier(connection)] = connection }
    }

    private func closed(_ connection: Connection, reason: String) {
        openConnections.withLock { $0[ObjectIdentifier(connection)] = nil }
        let node = connection.peer?.node
        let wasRegistered = connections.withLock { connections in
            guard let node, connections[node.name] === connection else { return false }
            connections[node.name] = nil
            return true
        }
        fail(callsOn: connection, with: .peerDisconnected(node: node?.name ?? connection.remoteAddress.description, reason: reason))
        if wasRegistered, let node { emit(.disconnected(node, reason: reason)) }
    }

    private func emit(_ event: PeerEvent) {
        let streams = peerEvents.withLock { Array($0.values) }
        for stream in streams { stream.yield(event) }
    }

    /// Writes one line to stderr, prefixed with this node's name.
    public func log(_ text: String) {
        FileHandle.standardError.write(Data("[\(node.name)] \(text)\n".utf8))
    }
}

/// A change in this node's connections to its peers.
public enum PeerEvent: Sendable, Equatable {
    case connected(WireMessage.Handshake)
    case disconnected(NodeID, reason: String)
    case left(NodeID)
}

/// A call waiting for its reply.
private struct PendingCall: Sendable {
    let continuation: CheckedContinuation<WireMessage.Reply.Outcome, any Error>
    let connection: ObjectIdentifier
}

/// A registry entry that does not keep its actor alive.
private final class WeakActor: Sendable {
    private let reference: Mutex<WeakReference>

    init(_ actor: any DistributedActor) {
        reference = Mutex(WeakReference(actor: actor))
    }

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
        case .refused: "refused"
        case .call: "call"
        case .reply: "reply"
        case .heartbeat: "heartbeat"
        case .heartbeatAck: "heartbeatAck"
        case .leave: "leave"
        }
    }
}
