import Glibc
import SpokesConcurrency
import SpokesTestKit
import Synchronization
import Testing
@testable import SpokesTransport

/// The machine's sockets on loopback, every one read by the process's one
/// ``SocketReactor`` thread: no thread per connection or port, each stream's bytes in
/// order and its end once, a stopped port's number free again.
@Suite(.processLane, .timeLimit(.minutes(1)))
struct SocketReactorTests {
    /// What one stream's reader saw.
    final class Received: Sendable {
        let bytes = Mutex<[UInt8]>([])
        let ends = Mutex<[StreamEnd]>([])
    }

    /// `count` connected pairs on loopback: the dialled ends, and the accepted ends
    /// reading into a ``Received`` each (by the dialled end's index).
    static func pairs(_ count: Int, stopAfter: Int? = nil) async throws -> (dialled: [any ByteStream], accepted: [any ByteStream], received: [Received], listener: any StreamListener) {
        let network = SocketNetwork()
        let listener = try network.listen(on: SocketAddress(host: "127.0.0.1", port: 0))
        let accepted = Mutex<[any ByteStream]>([])
        listener.start { stream in accepted.withLock { $0.append(stream) } }
        var dialled: [any ByteStream] = []
        var received: [Received] = []
        var readers: [any ByteStream] = []
        for index in 0..<count {
            let stream = try await network.connect(to: listener.address, timeout: 5)
            dialled.append(stream)
            try await eventually("connection \(index) accepted") { accepted.withLock { $0.count } == index + 1 }
            let reader = accepted.withLock { $0[index] }
            let seen = Received()
            reader.startReading(onBytes: { chunk in
                let total = seen.bytes.withLock { $0 += chunk; return $0.count }
                return stopAfter.map { total < $0 } ?? true
            }, onEnd: { end in seen.ends.withLock { $0.append(end) } })
            received.append(seen)
            readers.append(reader)
        }
        return (dialled, readers, received, listener)
    }

    @Test func twentyConnectionsAreReadInOrderByOneThreadAndNoneOfTheirOwn() async throws {
        let (dialled, accepted, received, listener) = try await Self.pairs(20)
        defer {
            listener.stop()
            for stream in dialled + accepted { stream.shutdown(); stream.close() }
        }
        for round in 0..<3 {
            for (index, stream) in dialled.enumerated() { #expect(stream.write(Array("\(index):\(round);".utf8))) }
        }
        try await eventually("every connection's three writes arrive") {
            received.enumerated().allSatisfy { index, seen in seen.bytes.withLock { $0.count } == 3 * "\(index):0;".utf8.count }
        }
        for (index, seen) in received.enumerated() {
            #expect(String(decoding: seen.bytes.withLock { $0 }, as: UTF8.self) == "\(index):0;\(index):1;\(index):2;")
        }
        let names = ProcessThreads.names()
        #expect(names.count { $0 == "spokes.sockets" } == 1, "one reactor thread: \(names)")
        #expect(!names.contains("spokes.connecti") && !names.contains("spokes.udp"), "no reader thread per connection or port: \(names)")
    }

    @Test func aStreamEndsOnceWhetherThePeerClosesItIsShutOrItsReaderStops() async throws {
        let (dialled, accepted, received, listener) = try await Self.pairs(3, stopAfter: 4)
        defer {
            listener.stop()
            for stream in dialled + accepted { stream.shutdown(); stream.close() }
        }
        // The peer closes: the end of the stream.
        dialled[0].shutdown()
        // This end is shut: a waiting read ends.
        accepted[1].shutdown()
        // The reader takes four bytes, then says stop.
        #expect(dialled[2].write(Array("abcdefgh".utf8)))
        try await eventually("all three ended") { received.allSatisfy { !$0.ends.withLock(\.isEmpty) } }
        // Rounds of the reactor after the ends: none is reported twice.
        let (others, otherAccepted, otherReceived, otherListener) = try await Self.pairs(1)
        defer {
            otherListener.stop()
            for stream in others + otherAccepted { stream.shutdown(); stream.close() }
        }
        #expect(others[0].write([1]))
        try await eventually("a later connection is still read") { otherReceived[0].bytes.withLock { $0 } == [1] }
        #expect(received.map { $0.ends.withLock { $0 } } == [[.closed], [.closed], [.stopped]])
        #expect(received[2].bytes.withLock { $0 }.count >= 4)
    }

    @Test func aStoppedDatagramPortIsClosedAndItsPortFreeAgain() async throws {
        let network = SocketNetwork()
        let port = TestPorts.discovery()
        let address = SocketAddress(host: "127.0.0.1", port: port)
        let receiver = try network.bindDatagrams(on: address, shared: false)
        let got = Mutex<[[UInt8]]>([])
        receiver.startReceiving(maximumSize: 16) { datagram, _ in got.withLock { $0.append(Array(datagram)) } }
        let sender = try network.bindDatagrams(on: SocketAddress(host: "127.0.0.1", port: 0), shared: false)
        defer { sender.stop() }
        try await eventually("a datagram arrives") {
            sender.send([7, 7], to: address)
            return !got.withLock(\.isEmpty)
        }
        #expect(got.withLock { $0.first } == [7, 7])
        // Larger than the largest: handed on with one byte beyond it, so it is seen as too large.
        try await eventually("a large datagram arrives cut at the largest and one byte") {
            sender.send([UInt8](repeating: 9, count: 40), to: address)
            return got.withLock { $0.contains { $0.count == 17 } }
        }
        receiver.stop()
        // Closed on the reactor's thread: the number is free once it did.
        var again: (any DatagramPort)?
        try await eventually("the port can be bound again") {
            again = try? network.bindDatagrams(on: address, shared: false)
            return again != nil
        }
        again?.stop()
    }
}
