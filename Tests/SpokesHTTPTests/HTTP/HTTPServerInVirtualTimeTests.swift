import SpokesClusterTestKit
import SpokesConcurrency
import Synchronization
import SpokesTestKit
import Testing
@testable import SpokesHTTP
@testable import SpokesTransport

/// The server that ships on a simulated network under a virtual clock: its deadlines
/// (header, idle, keep-alive), pipelining, caps and stopping, each to the virtual
/// millisecond and without waiting for real time. What only real sockets show (a
/// client that stops reading fills a send buffer) stays in `HTTPServerTests`.
@Suite(.simulated, .hangGuard)
struct HTTPServerInVirtualTimeTests {
    /// A server on host 127.0.0.1 of a simulated network (a cluster of no nodes, for its
    /// network, its clock and its way of moving time).
    struct Setup {
        let world: SimulatedCluster
        let server: HTTPServer

        init(_ limits: HTTPLimits = HTTPLimits(), handler: @escaping @Sendable (HTTPRequest) async -> HTTPResponse = { .text("path \($0.path)") }) throws {
            world = try SimulatedCluster(0)
            server = try HTTPServer(host: "127.0.0.1", port: 80, limits: limits, network: world.network.host("127.0.0.1"),
                                    clock: world.clock, handler: handler)
            server.start()
        }

        /// A client from host `127.0.0.x`.
        func connect(from x: Int = 9) async throws -> SimulatedHTTPClient {
            try await SimulatedHTTPClient.connect(on: world.network, from: "127.0.0.\(x)", to: server.address)
        }

        var now: Double { world.clock.now }

        func stop() {
            server.stop()
            world.stop()
        }
    }


    // MARK: Deadlines

    @Test func aConnectionThatSaysNothingIsClosedWithoutAnAnswerAtTheHeaderTimeout() async throws {
        let setup = try Setup()
        defer { setup.stop() }
        let client = try await setup.connect()
        let opened = setup.now
        try await setup.world.run(until: "the server closes the silent connection", within: 10) { client.ended }
        let closedAfter = setup.now - opened
        #expect(closedAfter >= 5 && closedAfter < 5.02, "closed \(closedAfter) s after opening; headerTimeout is 5 s")
        #expect(client.text.isEmpty, "nothing was asked, nothing is answered")
        #expect(setup.server.refusals.isEmpty)
    }

    @Test func aDribbledRequestIsAnswered408AtTheHeaderTimeoutCountedFromItsFirstByte() async throws {
        var limits = HTTPLimits()
        limits.headerTimeout = 1
        let setup = try Setup(limits)
        defer { setup.stop() }
        let client = try await setup.connect()
        let head = Array(SimulatedHTTPClient.get("/slow").utf8)
        // A byte every 0.1 s after the first eight: the head would be whole only after 2.2 s.
        let started = setup.now
        client.send(String(decoding: head.prefix(8), as: UTF8.self))
        let clock = setup.world.clock
        let dribbler = Task {
            for byte in head.dropFirst(8) {
                guard (try? await clock.sleep(for: 0.1)) != nil else { return }
                _ = client.stream.write([byte])
            }
        }
        defer { dribbler.cancel() }
        try await setup.world.run(until: "an answer", within: 10) { !client.statuses.isEmpty }
        let answeredAfter = setup.now - started
        #expect(client.statuses == [408])
        #expect(answeredAfter >= 1 && answeredAfter < 1.02, "answered \(answeredAfter) s after the first byte; a timeout restarted by each byte would answer after 3 s")
        #expect(client.text.contains("Connection: close"))
        try await setup.world.run(until: "the server closes", within: 6) { client.ended }
        #expect(setup.server.refusals["request_timeout"] == 1)
    }

    @Test func anIdleKeepAliveConnectionIsClosedAtTheIdleTimeoutWithoutAnAnswer() async throws {
        let setup = try Setup()
        defer { setup.stop() }
        let client = try await setup.connect()
        client.send(SimulatedHTTPClient.get("/"))
        try await setup.world.run(until: "the answer", within: 1) { client.statuses == [200] }
        let answered = setup.now
        try await setup.world.run(until: "the server closes the idle connection", within: 30) { client.ended }
        let idleFor = setup.now - answered
        #expect(idleFor >= 15 && idleFor < 15.02, "closed after \(idleFor) s idle; idleTimeout is 15 s")
        #expect(client.statuses == [200], "closing an idle connection answers nothing")
        #expect(setup.server.refusals.isEmpty)
    }

    @Test func aRequestBeforeTheIdleTimeoutKeepsTheConnection() async throws {
        let setup = try Setup()
        defer { setup.stop() }
        let client = try await setup.connect()
        for path in ["/1", "/2", "/3"] {
            client.send(SimulatedHTTPClient.get(path))
            try await setup.world.holds("the connection stays open 14 s", for: 14) { !client.ended }
        }
        #expect(client.statuses == [200, 200, 200])
        #expect(client.text.contains("path /3"))
    }

    // MARK: Requests

    @Test func pipelinedRequestsAreAnsweredInOrderWhenTheFirstIsSlowest() async throws {
        let clock = Mutex<VirtualClock?>(nil)
        let setup = try Setup { request in
            if request.path == "/1", let clock = clock.withLock({ $0 }) { try? await clock.sleep(for: 0.5) }
            return .text(request.path)
        }
        defer { setup.stop() }
        clock.withLock { $0 = setup.world.clock }
        let client = try await setup.connect()
        client.send(SimulatedHTTPClient.get("/1") + SimulatedHTTPClient.get("/2") + SimulatedHTTPClient.get("/3"))
        try await setup.world.run(until: "three answers", within: 2) { client.statuses.count == 3 }
        let bodies = client.text.components(separatedBy: "\r\n\r\n").dropFirst().map { $0.prefix(2) }
        #expect(bodies == ["/1", "/2", "/3"], "answers in request order: \(client.text)")
    }

    @Test func aRequestOverTheCapOnRequestsInProgressIsAnswered503AtOnce() async throws {
        var limits = HTTPLimits()
        limits.maxConnections = 1
        let release = Promise<Void, Never>()
        let setup = try Setup(limits) { request in
            if request.path == "/hold" { await release.future.value }
            return .text(request.path)
        }
        defer { setup.stop() }
        let holder = try await setup.connect(from: 9)
        holder.send(SimulatedHTTPClient.get("/hold"))
        try await setup.world.holds("the held request waits", for: 0.1) { holder.statuses.isEmpty }
        let other = try await setup.connect(from: 10)
        other.send(SimulatedHTTPClient.get("/other"))
        try await setup.world.run(until: "the second request's answer", within: 0.1) { other.ended }
        #expect(other.statuses == [503])
        #expect(other.text.contains("Retry-After: 1"))
        release.resolve(())
        try await setup.world.run(until: "the held request's answer", within: 1) { holder.statuses == [200] }
        #expect(setup.server.refusals["too_many_connections"] == 1)
    }

    // MARK: Event streams

    /// A server whose every request opens `stream`, and a client that asked for it and
    /// read its head.
    static func openStream() async throws -> (Setup, HTTPEventStream, SimulatedHTTPClient) {
        let stream = HTTPEventStream()
        let setup = try Setup { _ in .eventStream(stream) }
        let client = try await setup.connect()
        client.send(SimulatedHTTPClient.get("/events"))
        try await setup.world.run(until: "the stream's head", within: 1) { client.statuses == [200] }
        return (setup, stream, client)
    }

    @Test func anIdleEventStreamSendsAKeepAliveCommentEveryInterval() async throws {
        let (setup, stream, client) = try await Self.openStream()
        defer { setup.stop() }
        let opened = setup.now
        func comments() -> Int { client.text.components(separatedBy: ": keep-alive").count - 1 }
        try await setup.world.run(until: "two keep-alive comments", within: 40) { comments() == 2 }
        let elapsed = setup.now - opened
        #expect(elapsed >= 30 && elapsed < 30.02, "the second comment after \(elapsed) s; streamKeepAlive is 15 s")
        stream.send(data: "news")
        try await setup.world.holds("an event resets the keep-alive", for: 14.9) { comments() == 2 }
        #expect(client.text.hasSuffix("data: news\n\n"))
        try await setup.world.run(until: "the third comment", within: 0.2) { comments() == 3 }
    }

    @Test func aFinishedStreamSendsWhatIsQueuedThenCloses() async throws {
        let (setup, stream, client) = try await Self.openStream()
        defer { setup.stop() }
        stream.send(data: "last")
        stream.finish()
        try await setup.world.run(until: "the server closes", within: 6) { client.ended }
        #expect(client.text.hasSuffix("data: last\n\n"))
        #expect(stream.termination == .finished)
        #expect(setup.server.openStreamCount == 0)
    }

    @Test func aStreamWhoseClientLeavesEndsAsDisconnected() async throws {
        let (setup, stream, client) = try await Self.openStream()
        defer { setup.stop() }
        client.stream.shutdown()
        try await setup.world.run(until: "the stream ends", within: 1) { stream.termination != nil }
        #expect(stream.termination == .clientDisconnected)
        #expect(!stream.send(data: "after"), "a stream whose client left accepts nothing")
        try await setup.world.run(until: "the connection is released", within: 1) { setup.server.openConnectionCount == 0 }
    }

    // MARK: Stopping

    @Test func stopCancelsHandlersEndsStreamsAndClosesEveryConnection() async throws {
        let stream = HTTPEventStream()
        let cancelled = Atomic<Bool>(false)
        let clock = Mutex<VirtualClock?>(nil)
        let setup = try Setup { request in
            switch request.path {
            case "/events":
                return .eventStream(stream)
            case "/slow":
                let clock = clock.withLock { $0 }
                if (try? await clock?.sleep(for: 60)) == nil { cancelled.store(true, ordering: .relaxed) }
                return .text("late")
            default:
                return .text("ok")
            }
        }
        defer { setup.world.stop() }
        clock.withLock { $0 = setup.world.clock }
        let idle = try await setup.connect(from: 9)
        idle.send(SimulatedHTTPClient.get("/"))
        let listening = try await setup.connect(from: 10)
        listening.send(SimulatedHTTPClient.get("/events"))
        let waiting = try await setup.connect(from: 11)
        waiting.send(SimulatedHTTPClient.get("/slow"))
        try await setup.world.run(until: "three connections, one answered, one streaming", within: 1) {
            idle.statuses == [200] && listening.statuses == [200] && setup.server.openConnectionCount == 3
        }
        setup.server.stop()
        try await setup.world.complete("shutdown", within: 1) { await setup.server.shutdown() }
        try await setup.world.run(until: "every client sees the close", within: 1) { idle.ended && listening.ended && waiting.ended }
        #expect(stream.termination == .serverStopped)
        let wasCancelled = cancelled.load(ordering: .relaxed)
        #expect(wasCancelled, "the running handler was cancelled")
        #expect(waiting.statuses.isEmpty, "the cancelled request gets no answer, just the close")
        #expect(setup.server.openConnectionCount == 0 && setup.server.openStreamCount == 0)
        #expect(await (try? setup.connect(from: 12)) == nil, "the listener is closed")
    }
}
