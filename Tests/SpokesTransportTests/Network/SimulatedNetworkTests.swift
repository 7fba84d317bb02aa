import Glibc
import SpokesConcurrency
import SpokesTransport
import Synchronization
import Testing

/// What a reader of a simulated stream or port has been handed, and a way to wait for it.
private final class Received: Sendable {
    private let state = Mutex((bytes: [UInt8](), datagrams: [(bytes: [UInt8], from: SocketAddress)](), end: StreamEnd?.none))
    private let changes: AsyncStream<Void>
    private let changed: AsyncStream<Void>.Continuation

    init() { (changes, changed) = AsyncStream.makeStream(of: Void.self) }

    var bytes: [UInt8] { state.withLock { $0.bytes } }
    var end: StreamEnd? { state.withLock { $0.end } }
    var datagrams: [(bytes: [UInt8], from: SocketAddress)] { state.withLock { $0.datagrams } }

    func read(_ stream: any ByteStream) {
        stream.startReading(onBytes: { [self] chunk in
            state.withLock { $0.bytes += chunk }
            changed.yield()
            return true
        }, onEnd: { [self] end in
            state.withLock { $0.end = end }
            changed.yield()
        })
    }

    func receive(_ port: any DatagramPort) {
        port.startReceiving(maximumSize: 100) { [self] bytes, source in
            state.withLock { $0.datagrams.append((Array(bytes), source)) }
            changed.yield()
        }
    }

    /// Waits (for events, never for a time) until `condition` holds.
    func wait(until condition: (Received) -> Bool) async {
        var iterator = changes.makeAsyncIterator()
        while !condition(self) { _ = await iterator.next() }
    }
}

@Suite struct SimulatedNetworkTests {
    let clock = VirtualClock()

    /// Two hosts and a stream from the first to a listener on the second.
    private func connectedPair(_ network: SimulatedNetwork) async throws -> (client: any ByteStream, server: any ByteStream) {
        let listener = try network.host("127.0.0.2").listen(on: SocketAddress(host: "127.0.0.2", port: 0))
        let accepted = Promise<any ByteStream, Never>()
        listener.start { accepted.resolve($0) }
        let client = try await network.host("127.0.0.1").connect(to: listener.address, timeout: 1)
        return (client, await accepted.future.value)
    }

    @Test func aStreamDeliversEveryByteInOrderThenItsEnd() async throws {
        let network = SimulatedNetwork(clock: clock)
        let (client, server) = try await connectedPair(network)
        #expect(server.remoteAddress.host == "127.0.0.1" && client.remoteAddress.host == "127.0.0.2")
        let received = Received()
        received.read(server)
        for chunk in 0..<50 { #expect(client.write([UInt8(chunk), UInt8(chunk)])) }
        client.shutdown()
        await received.wait { $0.end != nil }
        #expect(received.bytes == (0..<50).flatMap { [UInt8($0), UInt8($0)] })
        #expect(received.end == .closed)
        #expect(!client.write([1]), "a shut-down stream takes no more")
    }

    @Test func aConnectionToAPortNobodyListensOnIsRefused() async throws {
        let network = SimulatedNetwork(clock: clock)
        await #expect(throws: TransportError.socketFailed(operation: "connect to", address: "127.0.0.9:7", errno: ECONNREFUSED)) {
            try await network.host("127.0.0.1").connect(to: SocketAddress(host: "127.0.0.9", port: 7), timeout: 1)
        }
    }

    @Test func aCutLinkHoldsAStreamsBytesUntilItHeals() async throws {
        let network = SimulatedNetwork(clock: clock)
        let (client, server) = try await connectedPair(network)
        let received = Received()
        received.read(server)
        #expect(client.write([1]))
        await received.wait { $0.bytes == [1] }
        network.cut(from: "127.0.0.1", to: "127.0.0.2")
        #expect(client.write([2]))
        for _ in 0..<20 {
            clock.advance(by: 0.01)
            await Task.yield()
        }
        #expect(received.bytes == [1], "nothing crosses a cut link")
        network.heal()
        clock.advance(by: 0.01)
        await received.wait { $0.bytes == [1, 2] }
    }

    @Test func aConnectAcrossACutLinkTimesOut() async throws {
        let network = SimulatedNetwork(clock: clock)
        let listener = try network.host("127.0.0.2").listen(on: SocketAddress(host: "127.0.0.2", port: 5000))
        network.cut(from: "127.0.0.2", to: "127.0.0.1")
        await #expect(throws: TransportError.connectTimedOut(address: "127.0.0.2:5000")) {
            try await network.host("127.0.0.1").connect(to: listener.address, timeout: 1)
        }
    }

    @Test func aBroadcastReachesEverySharedPortOfItsNumberAndSaysWhoSentIt() async throws {
        let network = SimulatedNetwork(clock: clock)
        let broadcast = SocketAddress(host: "127.255.255.255", port: 4000)
        let ports = try ["127.0.0.1", "127.0.0.2", "127.0.0.3"].map { try network.host($0).bindDatagrams(on: broadcast, shared: true) }
        let other = try network.host("127.0.0.4").bindDatagrams(on: SocketAddress(host: "127.255.255.255", port: 4001), shared: true)
        let received = ports.map { _ in Received() }
        for (port, receiver) in zip(ports, received) { receiver.receive(port) }
        let unrelated = Received()
        unrelated.receive(other)
        ports[0].send([7, 7], to: broadcast)
        for receiver in received {
            await receiver.wait { $0.datagrams.count == 1 }
            #expect(receiver.datagrams[0].bytes == [7, 7] && receiver.datagrams[0].from == SocketAddress(host: "127.0.0.1", port: 4000))
        }
        #expect(unrelated.datagrams.isEmpty)
    }

    @Test func aDatagramToOneHostReachesOnlyItAndNotAcrossACut() async throws {
        let network = SimulatedNetwork(clock: clock)
        let a = try network.host("127.0.0.1").bindDatagrams(on: SocketAddress(host: "127.0.0.1", port: 6000), shared: false)
        let b = try network.host("127.0.0.2").bindDatagrams(on: SocketAddress(host: "127.0.0.2", port: 6000), shared: false)
        let atB = Received()
        atB.receive(b)
        network.cut(from: "127.0.0.1", to: "127.0.0.2")
        a.send([1], to: b.address)
        network.heal()
        a.send([2], to: b.address)
        await atB.wait { !$0.datagrams.isEmpty }
        #expect(atB.datagrams.map(\.bytes) == [[2]], "the datagram sent across the cut was lost")
        #expect(throws: TransportError.self) {
            try network.host("127.0.0.2").bindDatagrams(on: SocketAddress(host: "127.0.0.2", port: 6000), shared: false)
        }
    }

    @Test func aFirewallDropsDatagramsToOnePortOfOneHostAndNothingElse() async throws {
        let network = SimulatedNetwork(clock: clock)
        let a = try network.host("127.0.0.1").bindDatagrams(on: SocketAddress(host: "127.0.0.1", port: 6000), shared: false)
        let b = try network.host("127.0.0.2").bindDatagrams(on: SocketAddress(host: "127.0.0.2", port: 6000), shared: false)
        let b2 = try network.host("127.0.0.2").bindDatagrams(on: SocketAddress(host: "127.0.0.2", port: 6001), shared: false)
        let atA = Received(), atB = Received(), atB2 = Received()
        atA.receive(a)
        atB.receive(b)
        atB2.receive(b2)
        network.dropDatagrams(to: "127.0.0.2", port: 6000)
        a.send([1], to: b.address)
        a.send([2], to: b2.address)
        b.send([3], to: a.address)
        await atB2.wait { !$0.datagrams.isEmpty }
        await atA.wait { !$0.datagrams.isEmpty }
        a.send([4], to: b.address)
        b.send([5], to: a.address)
        await atA.wait { $0.datagrams.count == 2 }
        #expect(atB.datagrams.isEmpty, "UDP to 127.0.0.2:6000 is dropped")
        #expect(atB2.datagrams.map(\.bytes) == [[2]] && atA.datagrams.map(\.bytes) == [[3], [5]], "other ports and the other way pass")
    }

    @Test func whatIsSentIsInFlightUntilItsReaderTookIt() async throws {
        let network = SimulatedNetwork(clock: clock)
        let (client, server) = try await connectedPair(network)
        #expect(network.inFlight == 0)
        #expect(client.write([1]) && client.write([2]))
        #expect(network.inFlight == 2)
        let received = Received()
        received.read(server)
        await received.wait { $0.bytes == [1, 2] }
        // The reader's count goes down once its callback returned, just after it saw the bytes.
        for _ in 0..<100_000 where network.inFlight != 0 { await Task.yield() }
        #expect(network.inFlight == 0)
        #expect(client.write([3]))
        client.close()
        server.close()
        await received.wait { $0.end != nil }
        for _ in 0..<100_000 where network.inFlight != 0 { await Task.yield() }
        #expect(network.inFlight == 0, "what nobody will read is not counted as on its way")
    }

    @Test func lossDropsTheSameDatagramsForTheSameSeed() async throws {
        func delivered(seed: UInt64) async throws -> [UInt8] {
            let network = SimulatedNetwork(clock: clock, seed: seed)
            network.loss = 0.5
            let a = try network.host("127.0.0.1").bindDatagrams(on: SocketAddress(host: "127.0.0.1", port: 0), shared: false)
            let b = try network.host("127.0.0.2").bindDatagrams(on: SocketAddress(host: "127.0.0.2", port: 0), shared: false)
            let atB = Received()
            atB.receive(b)
            for byte in 0..<100 { a.send([UInt8(byte)], to: b.address) }
            network.loss = 0
            a.send([255], to: b.address)
            await atB.wait { $0.datagrams.last?.bytes == [255] }
            return atB.datagrams.map { $0.bytes[0] }
        }
        let first = try await delivered(seed: 3)
        #expect(try await delivered(seed: 3) == first)
        #expect(try await delivered(seed: 4) != first)
        #expect((30...70).contains(first.count - 1), "about half of 100 are lost: \(first.count - 1) arrived")
    }

    @Test func aDelayedHostsDatagramsArriveLateAndOvertakeOneAnother() async throws {
        let network = SimulatedNetwork(clock: clock, seed: 5)
        let a = try network.host("127.0.0.1").bindDatagrams(on: SocketAddress(host: "127.0.0.1", port: 0), shared: false)
        let b = try network.host("127.0.0.2").bindDatagrams(on: SocketAddress(host: "127.0.0.2", port: 0), shared: false)
        let atA = Received(), atB = Received()
        atA.receive(a)
        atB.receive(b)
        network.delay(from: "127.0.0.1", by: 0.05...0.2)
        for byte in 0..<30 { a.send([UInt8(byte)], to: b.address) }
        b.send([99], to: a.address)
        await atA.wait { $0.datagrams.count == 1 }
        #expect(atA.datagrams[0].bytes == [99], "the other host's datagrams are not delayed")
        // Each waits on the clock, not on the network: the driver may move time.
        for _ in 0..<100_000 where clock.sleepers < 30 { await Task.yield() }
        #expect(clock.sleepers == 30 && network.inFlight == 0)
        #expect(atB.datagrams.isEmpty, "nothing arrives before its delay")
        clock.advance(by: 0.2)
        await atB.wait { $0.datagrams.count == 30 }
        let order = atB.datagrams.map { $0.bytes[0] }
        #expect(order.sorted() == Array(0..<30), "every datagram arrives once")
        #expect(order != Array(0..<30), "drawn delays reorder them: \(order)")
        network.stopDelaying()
        a.send([100], to: b.address)
        await atB.wait { $0.datagrams.count == 31 }
    }

    @Test func aDelayedStreamKeepsItsOrderAndItsEndComesAfterItsBytes() async throws {
        let network = SimulatedNetwork(clock: clock, seed: 9)
        let (first, firstServer) = try await connectedPair(network)
        let (second, secondServer) = try await connectedPair(network)
        let atFirst = Received(), atSecond = Received()
        atFirst.read(firstServer)
        atSecond.read(secondServer)
        network.delay(from: nil, by: 0.05...0.3)
        for chunk in 0..<20 {
            #expect(first.write([UInt8(chunk)]))
            #expect(second.write([UInt8(100 + chunk)]))
        }
        first.shutdown()
        for _ in 0..<100_000 where clock.sleepers < 2 { await Task.yield() }
        #expect(atFirst.bytes.isEmpty && atSecond.bytes.isEmpty && atFirst.end == nil, "nothing arrives before its delay, not even the end")
        #expect(network.inFlight == 0, "held chunks wait on the clock")
        for _ in 0..<40 {
            clock.advance(by: 0.01)
            for _ in 0..<200 { await Task.yield() }
        }
        await atFirst.wait { $0.end != nil }
        await atSecond.wait { $0.bytes.count == 20 }
        #expect(atFirst.bytes == (0..<20).map { UInt8($0) }, "in order within the stream")
        #expect(atSecond.bytes == (0..<20).map { UInt8(100 + $0) })
        #expect(atFirst.end == .closed)
    }
}
