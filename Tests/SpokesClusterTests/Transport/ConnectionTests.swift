import SpokesTestKit
import Foundation
import SpokesConcurrency
import Testing
@testable import SpokesCluster

@Suite(.processLane, .timeLimit(.minutes(1)))
struct ConnectionTests {
    /// Two connected stream sockets; the test owns both descriptors.
    func socketPair() -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        _ = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds)
        return (fds[0], fds[1])
    }

    @Test func aPeerThatStopsReadingIsDroppedOnceTheSendQueueIsFull() async throws {
        let (mine, theirs) = socketPair()
        defer { Glibc.close(theirs) }
        var settings = ClusterSettings()
        settings.maximumSendQueueBytes = 1 << 20
        let rejections = RejectionCounters()
        let connection = Connection(stream: SocketStream(fd: mine, remoteAddress: SocketAddress(host: "127.0.0.1", port: 1)), isOutbound: true,
                                    limits: Connection.Limits(settings), rejections: rejections, clock: RealClock())
        let closed = Promise<String, Never>()
        connection.start(Connection.Handlers(onMessage: { _, _ in }, onClose: { _, reason in closed.resolve(reason) }))
        // 10 MiB to a peer that never reads: far more than the socket buffers and the 1 MiB queue.
        let large = WireMessage.refused(WireMessage.Refusal(reason: String(repeating: "x", count: 100_000)))
        for _ in 0..<100 where !connection.isClosed { connection.send(large) }
        let reason = try await withTimeout(seconds: 10) { await closed.future.value }
        #expect(reason.contains("not reading"))
        #expect(rejections[.sendQueueFull] == 1)
        #expect(connection.startedWriteThread, "the writes that waited went to a thread of the connection's own")
    }

    /// A connection whose writes all go at once in place never starts its write thread,
    /// and its reads are the process's one socket thread's: an idle connection costs no
    /// thread (issue 33 §3). Its end still closes it, once.
    @Test func aConnectionWhoseWritesNeverWaitHasNoThreadOfItsOwn() async throws {
        let (mine, theirs) = socketPair()
        let connection = Connection(stream: SocketStream(fd: mine, remoteAddress: SocketAddress(host: "127.0.0.1", port: 1)), isOutbound: true,
                                    limits: Connection.Limits(ClusterSettings()), rejections: RejectionCounters(), clock: RealClock())
        let closed = Promise<String, Never>()
        connection.start(Connection.Handlers(onMessage: { _, _ in }, onClose: { _, reason in closed.resolve(reason) }))
        for sequence in 0..<10 { connection.send(.heartbeat(WireMessage.Heartbeat(sequence: UInt64(sequence)))) }
        #expect(!connection.startedWriteThread)
        // The peer ends its side (closing it unread would reset the connection instead).
        defer { Glibc.close(theirs) }
        Glibc.shutdown(theirs, Int32(SHUT_WR))
        let reason = try await withTimeout(seconds: 10) { await closed.future.value }
        #expect(reason == Connection.peerClosedReason)
        #expect(!connection.startedWriteThread, "the end ran where the stream ended, not on a thread started for it")
    }
}
