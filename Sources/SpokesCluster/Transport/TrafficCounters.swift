import Synchronization

/// What a node's (or client's) connections carried since it started: frames and their
/// bytes (length prefix included, sealed as they went on the wire), each way. Counted by
/// every ``Connection`` of one ``ClusterSystem``; readable from any thread, for
/// `GET /metrics`. Datagrams (beacons, probes) are not counted here.
public final class TrafficCounters: Sendable {
    private let bytesSentCount = Atomic<Int>(0)
    private let bytesReceivedCount = Atomic<Int>(0)
    private let framesSentCount = Atomic<Int>(0)
    private let framesReceivedCount = Atomic<Int>(0)

    public init() {}

    /// The four counts at one moment (each read on its own, so not one instant).
    public struct Counts: Sendable, Hashable {
        public var bytesSent: Int
        public var bytesReceived: Int
        public var framesSent: Int
        public var framesReceived: Int

        public init(bytesSent: Int = 0, bytesReceived: Int = 0, framesSent: Int = 0, framesReceived: Int = 0) {
            self.bytesSent = bytesSent
            self.bytesReceived = bytesReceived
            self.framesSent = framesSent
            self.framesReceived = framesReceived
        }
    }

    public var counts: Counts {
        Counts(bytesSent: bytesSentCount.load(ordering: .relaxed), bytesReceived: bytesReceivedCount.load(ordering: .relaxed),
               framesSent: framesSentCount.load(ordering: .relaxed), framesReceived: framesReceivedCount.load(ordering: .relaxed))
    }

    /// `frames` frames, `bytes` bytes in all, went to the stream.
    func sent(frames: Int, bytes: Int) {
        framesSentCount.add(frames, ordering: .relaxed)
        bytesSentCount.add(bytes, ordering: .relaxed)
    }

    /// The stream delivered `bytes` bytes.
    func received(bytes: Int) {
        bytesReceivedCount.add(bytes, ordering: .relaxed)
    }

    /// A whole frame was taken out of what the stream delivered.
    func receivedFrame() {
        framesReceivedCount.add(1, ordering: .relaxed)
    }
}
