import Dispatch
import Foundation
import SpokesConcurrency
import SpokesTestKit
import Synchronization
import Testing
@testable import SpokesCluster

/// How a connection writes: a lone call goes at once, in the sender's thread; calls
/// queued while a write waits go together, in batches on a connection of protocol 6 and
/// one frame each below it. On a stream in memory whose writes may be held, so nothing
/// here needs a socket, a sleep or a clock.
@Suite(.hangGuard)
struct ConnectionBatchingTests {
    /// A stream whose writes a test may hold: while held, `writeWithoutWaiting` takes
    /// nothing (a full socket buffer) and `write` blocks until ``release()``.
    final class HeldStream: ByteStream {
        let remoteAddress = SocketAddress(host: "127.0.0.1", port: 1)
        var writesWait: Bool { true }
        private let state = Mutex<(held: Bool, bytes: [UInt8], writes: Int, inPlace: Int)>((false, [], 0, 0))
        private let released = DispatchSemaphore(value: 0)
        /// Resolved once a write blocks on the hold: the write thread has taken over.
        let blocked = Promise<Void, Never>()
        private let watchers = Mutex<[(frames: Int, promise: Promise<Void, Never>)]>([])

        func hold() { state.withLock { $0.held = true } }

        func release() {
            state.withLock { $0.held = false }
            released.signal()
        }

        /// Resolves once `count` frames have been written.
        func written(frames count: Int) -> Future<Void, Never> {
            let promise = Promise<Void, Never>()
            watchers.withLock { $0.append((count, promise)) }
            notify()
            return promise.future
        }

        var bytes: [UInt8] { state.withLock { $0.bytes } }
        var writeCount: Int { state.withLock { $0.writes } }
        var inPlaceWrites: Int { state.withLock { $0.inPlace } }

        /// The frames written so far (no secret: each frame's payload is the message's JSON).
        var frames: [[UInt8]] {
            var decoder = FrameDecoder(maximumFrameSize: 1 << 24)
            decoder.feed(bytes)
            var frames: [[UInt8]] = []
            while let frame = try? decoder.nextFrame() { frames.append(frame) }
            return frames
        }

        private func notify() {
            let count = frames.count
            let due = watchers.withLock { watchers in
                let due = watchers.filter { $0.frames <= count }
                watchers.removeAll { $0.frames <= count }
                return due
            }
            for watcher in due { watcher.promise.resolve(()) }
        }

        private let end = Mutex<(@Sendable (StreamEnd) -> Void)?>(nil)

        /// Reads nothing; its end comes with ``shutdown()``, so the connection's write
        /// thread ends with the test.
        func startReading(onBytes: @escaping @Sendable (ArraySlice<UInt8>) -> Bool, onEnd: @escaping @Sendable (StreamEnd) -> Void) {
            end.withLock { $0 = onEnd }
        }

        func write(_ bytes: [UInt8]) -> Bool {
            if state.withLock({ $0.held }) {
                blocked.resolve(())
                released.wait()
            }
            state.withLock { $0.bytes += bytes; $0.writes += 1 }
            notify()
            return true
        }

        func writeWithoutWaiting(_ bytes: [UInt8]) -> Int? {
            let taken = state.withLock { state -> Bool in
                guard !state.held else { return false }
                state.bytes += bytes
                state.writes += 1
                state.inPlace += 1
                return true
            }
            if taken { notify() }
            return taken ? bytes.count : 0
        }

        func shutdown() {
            end.withLock { end in
                defer { end = nil }
                return end
            }?(.closed)
        }

        func shutdownWriting() { shutdown() }

        func close() {}
    }

    func connection(on stream: HeldStream, agreeing version: Int) -> Connection {
        let connection = Connection(stream: stream, isOutbound: true, limits: Connection.Limits(ClusterSettings()), rejections: RejectionCounters(),
                                    clock: VirtualClock())
        connection.agreedVersion.store(version, ordering: .releasing)
        connection.start(Connection.Handlers(onMessage: { _, _ in }, onClose: { _, _ in }))
        return connection
    }

    func call(_ id: Int) -> WireMessage {
        .call(.init(id: UInt64(id), recipient: ActorID(node: NodeID(name: "b", incarnation: 1), name: "worker"), target: "$s4main1fyyF",
                    genericSubstitutions: [], arguments: ["\(id)"]))
    }

    func messages(in frames: [[UInt8]]) throws -> [WireMessage] {
        try frames.flatMap { frame -> [WireMessage] in
            let message = try JSONDecoder().decode(WireMessage.self, from: Data(frame))
            if case .batch(let members) = message { return members }
            return [message]
        }
    }

    @Test func aLoneCallIsWrittenAtOnceInTheSendersThread() throws {
        let stream = HeldStream()
        let connection = connection(on: stream, agreeing: ProtocolVersions.batching)
        defer { connection.close(reason: "test over") }
        connection.send(call(1))
        // Written before `send` returned: no batch to fill, no timer, no other thread.
        #expect(try messages(in: stream.frames) == [call(1)])
        #expect(stream.frames.count == 1)
        #expect(stream.inPlaceWrites == 1)
        connection.send(call(2))
        #expect(try messages(in: stream.frames) == [call(1), call(2)], "an idle connection writes each call at once")
        #expect(stream.inPlaceWrites == 2)
    }

    @Test func callsQueuedWhileAWriteWaitsGoInOneBatchFrame() async throws {
        let stream = HeldStream()
        let connection = connection(on: stream, agreeing: ProtocolVersions.batching)
        defer { connection.close(reason: "test over") }
        stream.hold()
        // The socket takes nothing: the first call goes to the write thread, which waits.
        connection.send(call(0))
        await stream.blocked.future.value
        for id in 1...50 { connection.send(call(id)) }
        stream.release()
        try await withTimeout(seconds: 10) { await stream.written(frames: 2).value }
        let frames = stream.frames
        #expect(frames.count == 2, "the waiting call alone, then the 50 queued behind it as one batch")
        #expect(try messages(in: frames) == (0...50).map(call), "every call, in order")
        #expect(stream.writeCount == 2)
    }

    @Test func belowProtocolSixQueuedCallsGoOneFrameEachAsBefore() async throws {
        let stream = HeldStream()
        let connection = connection(on: stream, agreeing: 5)
        defer { connection.close(reason: "test over") }
        stream.hold()
        connection.send(call(0))
        await stream.blocked.future.value
        for id in 1...20 { connection.send(call(id)) }
        stream.release()
        try await withTimeout(seconds: 10) { await stream.written(frames: 21).value }
        let frames = stream.frames
        #expect(frames.count == 21, "a peer of protocol 5 knows no batch")
        #expect(try frames.map { try JSONDecoder().decode(WireMessage.self, from: Data($0)) } == (0...20).map(call))
        #expect(stream.writeCount == 2, "still one write for the frames queued together")
    }
}
