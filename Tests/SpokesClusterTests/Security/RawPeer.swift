import SpokesConcurrency
import Foundation
import Synchronization
@testable import SpokesCluster

/// A hand-driven TCP peer for hostile-input tests: it sends whatever bytes a test gives
/// it, and can also run the honest handshake to attack an authenticated session. Every
/// blocking socket call runs on a dispatch queue, never on the cooperative pool.
final class RawPeer: Sendable {
    let fd: Int32

    private init(fd: Int32) {
        self.fd = fd
    }

    static func connect(to address: SocketAddress) async throws -> RawPeer {
        try await offPool { RawPeer(fd: try Socket.connect(to: address, timeout: 2)) }
    }

    /// The next connection to the listening socket `listener`, as a peer the node dialled
    /// (at most `timeout` seconds).
    static func accept(on listener: Int32, timeout: Double = 5) async throws -> RawPeer {
        try await offPool {
            var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Duration.clamped(seconds: timeout).pollMilliseconds) > 0 else { throw TransportError.socketFailed(operation: "accept", address: "", errno: ETIMEDOUT) }
            let fd = Glibc.accept(listener, nil, nil)
            guard fd >= 0 else { throw TransportError.socketFailed(operation: "accept", address: "", errno: errno) }
            return RawPeer(fd: fd)
        }
    }

    /// Sends `bytes`; false if the node has closed the connection.
    @discardableResult
    func send(_ bytes: [UInt8]) async -> Bool {
        (try? await offPool { Socket.sendAll(self.fd, bytes) }) ?? false
    }

    @discardableResult
    func sendFrame(_ payload: [UInt8]) async -> Bool {
        await send(FrameDecoder.frame(payload))
    }

    @discardableResult
    func sendFrame(_ message: WireMessage) async -> Bool {
        await sendFrame(Array(try! JSONEncoder().encode(message)))
    }

    /// The next frame's payload, or nil if the connection closes or nothing arrives within `timeout`.
    func readFrame(timeout: Double = 2) async -> [UInt8]? {
        try? await offPool {
            guard let header = self.read(count: 4, timeout: timeout) else { return nil }
            let length = header.reduce(0) { $0 << 8 | Int($1) }
            return self.read(count: length, timeout: timeout)
        }
    }

    func readMessage(timeout: Double = 2) async -> WireMessage? {
        guard let frame = await readFrame(timeout: timeout) else { return nil }
        return try? JSONDecoder().decode(WireMessage.self, from: Data(frame))
    }

    /// Sends `payload` as a handshake frame of a node holding `secret`: sealed
    /// (``Connection/sealedHandshakeMark``, then a ``SealedBox``), or in clear without one.
    @discardableResult
    func sendHandshakeFrame(_ payload: [UInt8], secret: ClusterSecret?) async -> Bool {
        await sendFrame(secret.map { [Connection.sealedHandshakeMark] + SealedBox(secret: $0, purpose: .handshakeFrames).seal(payload) } ?? payload)
    }

    @discardableResult
    func sendHandshakeFrame(_ message: WireMessage, secret: ClusterSecret?) async -> Bool {
        await sendHandshakeFrame(Array(try! JSONEncoder().encode(message)), secret: secret)
    }

    /// The next handshake message, opened with `secret` if it came sealed (a refusal to a
    /// peer that spoke in clear comes in clear); nil if it does not open or decode.
    func readHandshakeMessage(secret: ClusterSecret?, timeout: Double = 2) async -> WireMessage? {
        guard let frame = await readFrame(timeout: timeout) else { return nil }
        let payload = frame.first == Connection.sealedHandshakeMark
            ? secret.flatMap { SealedBox(secret: $0, purpose: .handshakeFrames).open(frame.dropFirst()) } : frame
        return payload.flatMap { try? JSONDecoder().decode(WireMessage.self, from: Data($0)) }
    }

    /// True once the node closes the connection (reads end), false if it stays open for `timeout`.
    func closedByNode(within timeout: Double = 3) async -> Bool {
        (try? await offPool {
            let deadline = RealClock().now + timeout
            var buffer = [UInt8](repeating: 0, count: 4096)
            while RealClock().now < deadline {
                self.setReceiveTimeout(max(0.01, deadline - RealClock().now))
                let count = buffer.withUnsafeMutableBytes { recv(self.fd, $0.baseAddress, $0.count, 0) }
                if count == 0 { return true }
                if count < 0, errno == ECONNRESET { return true }
                if count < 0, errno != EAGAIN, errno != EWOULDBLOCK, errno != EINTR { return true }
            }
            return false
        }) ?? false
    }

    private let closed = Atomic<Bool>(false)

    /// Closes the socket, once (later calls do nothing: the number may be reused by then).
    func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        Glibc.close(fd)
    }

    /// Runs the dialler's side of the handshake, its frames sealed as a node seals them
    /// with `secret` (``Connection/sealedHandshakeMark``, then a ``SealedBox``). With
    /// `secret` nil it sends an empty proof; with a wrong secret the node must refuse it.
    /// Returns the session's seal, or nil if the node did not welcome us.
    func handshake(cluster: String, secret: ClusterSecret?, name: String = "raw", protocolVersions: ProtocolVersions = .current) async -> AuthenticatedSession? {
        let hello = WireMessage.Handshake(protocolVersions: protocolVersions, cluster: cluster, node: NodeID(name: name, incarnation: 1), address: "", slots: 0,
                                          authenticated: secret != nil, nonce: HandshakeAuthentication.makeNonce())
        await sendHandshakeFrame(.hello(hello), secret: secret)
        guard case .welcome(let welcome)? = await readHandshakeMessage(secret: secret) else { return nil }
        guard let secret else {
            await sendHandshakeFrame(.proof(WireMessage.Proof(tag: "")), secret: nil)
            return nil
        }
        let authentication = HandshakeAuthentication(secret: secret)
        await sendHandshakeFrame(.proof(WireMessage.Proof(tag: authentication.dialerProof(hello: hello, welcome: welcome.handshake))), secret: secret)
        let seal = authentication.frameSeal(hello: hello, welcome: welcome.handshake, role: .dialer)
        return AuthenticatedSession(peer: self, node: welcome.handshake.node, sender: seal, receiver: seal)
    }

    private func read(count: Int, timeout: Double) -> [UInt8]? {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: max(1, min(count, 65_536)))
        let deadline = RealClock().now + timeout
        while bytes.count < count, RealClock().now < deadline {
            setReceiveTimeout(max(0.01, deadline - RealClock().now))
            let received = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, min($0.count, count - bytes.count), 0) }
            if received == 0 { return nil }
            if received < 0 { if errno == EAGAIN || errno == EINTR || errno == EWOULDBLOCK { continue } else { return nil } }
            bytes += buffer[..<received]
        }
        return bytes.count == count ? bytes : nil
    }

    private func setReceiveTimeout(_ seconds: Double) {
        var time = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - Double(Int(seconds))) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
    }
}

/// A raw peer past the handshake: it seals what it sends and opens what it reads, like a
/// member would, so a test can also break the rules on purpose.
final class AuthenticatedSession {
    let peer: RawPeer
    let node: NodeID
    var sender: FrameSeal
    var receiver: FrameSeal

    init(peer: RawPeer, node: NodeID, sender: FrameSeal, receiver: FrameSeal) {
        self.peer = peer
        self.node = node
        self.sender = sender
        self.receiver = receiver
    }

    /// The sealed frame of `message`, advancing the send sequence.
    func seal(_ message: WireMessage) -> [UInt8] {
        // A test's session never seals 2^64 - 1 frames.
        try! sender.seal(Array(try! JSONEncoder().encode(message)))
    }

    @discardableResult
    func send(_ message: WireMessage) async -> Bool {
        await peer.sendFrame(seal(message))
    }

    /// The next `count` messages from the node, the members of a batch one by one; nil
    /// as ``read(timeout:)``.
    func read(_ count: Int, timeout: Double = 2) async -> [WireMessage]? {
        var messages: [WireMessage] = []
        while messages.count < count {
            guard let message = await read(timeout: timeout) else { return nil }
            if case .batch(let members) = message { messages += members } else { messages.append(message) }
        }
        return messages
    }

    /// The next message from the node, its tag checked; nil on close, a bad tag, or when
    /// nothing else arrives within `timeout`. The node's own heartbeats (every 0.2 s on
    /// every connection) are read and passed over, so they never stand in for the answer
    /// a test waits for (nor keep the wait going past `timeout`).
    func read(timeout: Double = 2) async -> WireMessage? {
        let deadline = RealClock().now + timeout
        while true {
            let remaining = deadline - RealClock().now
            guard remaining > 0, let frame = await peer.readFrame(timeout: remaining), let payload = receiver.open(frame) else { return nil }
            let message = try? JSONDecoder().decode(WireMessage.self, from: Data(payload))
            if case .heartbeat? = message { continue }
            return message
        }
    }
}

/// Runs blocking work on a thread of its own and awaits it (see ``runBlocking(_:_:)``).
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await runBlocking("spokes.test.raw-peer", body)
}
