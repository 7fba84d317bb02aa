import SpokesConcurrency
import SpokesTransport
import Synchronization
import Testing
@testable import SpokesCluster

/// What a node's heartbeat tick hands its membership of a connection: when the peer was
/// last heard from, once for each time it was heard (the same time again is no news).
@Suite struct ConnectionHeardTests {
    /// A stream in memory whose writes never wait: what is written goes to `sink`, and
    /// ``deliver(_:)`` hands bytes to its reader.
    final class MemoryStream: ByteStream {
        let remoteAddress = SocketAddress(host: "127.0.0.1", port: 1)
        var writesWait: Bool { false }
        let written = Mutex<[UInt8]>([])
        private let reader = Mutex<(@Sendable (ArraySlice<UInt8>) -> Bool)?>(nil)

        func startReading(onBytes: @escaping @Sendable (ArraySlice<UInt8>) -> Bool, onEnd: @escaping @Sendable (StreamEnd) -> Void) {
            reader.withLock { $0 = onBytes }
        }

        func write(_ bytes: [UInt8]) -> Bool {
            written.withLock { $0 += bytes }
            return true
        }

        func shutdown() {}
        func shutdownWriting() {}
        func close() {}

        func deliver(_ bytes: [UInt8]) {
            _ = reader.withLock { $0 }?(bytes[...])
        }
    }

    @Test func aPeerIsNewsOnlyWhenHeardFromSinceTheLastAsking() {
        let clock = VirtualClock(now: 5)
        let outgoing = MemoryStream(), incoming = MemoryStream()
        let limits = Connection.Limits(ClusterSettings())
        let sender = Connection(stream: outgoing, isOutbound: true, limits: limits, rejections: RejectionCounters(), clock: clock)
        let receiver = Connection(stream: incoming, isOutbound: false, limits: limits, rejections: RejectionCounters(), clock: clock)
        receiver.start(Connection.Handlers(onMessage: { _, _ in }, onClose: { _, _ in }))
        // Opened at 5: that is when it was last heard from, once.
        #expect(receiver.receivedSinceAsked() == 5)
        #expect(receiver.receivedSinceAsked() == nil)
        _ = clock.advance(by: 2)
        sender.send(.heartbeat(WireMessage.Heartbeat(sequence: 1)))
        incoming.deliver(outgoing.written.withLock { $0 })
        #expect(receiver.lastReceived == 7)
        #expect(receiver.receivedSinceAsked() == 7)
        #expect(receiver.receivedSinceAsked() == nil, "the same time again is no news")
    }
}
