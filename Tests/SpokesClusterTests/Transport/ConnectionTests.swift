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
    }
}
