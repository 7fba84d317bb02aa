/// Many calls and replies in one frame: ``WireMessage/batch(_:)``, protocol 6
/// (``ProtocolVersions/batching``), sans-IO.
///
/// On the wire a batch is one message, `{"type": "batch", "body": [m1, m2, ...]}`, whose
/// members are calls and replies exactly as each would travel alone. A connection seals
/// it as one frame, so it costs one seal, one frame check and one decode where its
/// members would cost one each, and every member is as authenticated and as
/// replay-protected as the frame (``FrameSeal``'s counter covers it whole). A sender
/// batches only on a connection that agreed protocol 6, only what is queued at the
/// moment it writes (a lone message goes alone, at once), and at most ``maximumCount``
/// messages and ``maximumBytes`` of them per frame; a receiver refuses a batch that is
/// empty, longer than ``maximumCount``, or holds anything but calls and replies.
public enum WireBatch {
    /// Most messages in one batch: a sender puts no more in one frame, and a receiver
    /// refuses a batch of more as malformed.
    public static let maximumCount = 1_024

    /// Most bytes of messages (their JSON, before sealing) a sender puts in one batch: a
    /// frame no larger than a handshake's (64 KiB), so a peer whose
    /// `limits.max_frame_bytes` is smaller than this node's is not sent a frame it would
    /// not have been sent without batching, and a frame behind it does not wait long.
    public static let maximumBytes = 64 * 1024

    /// The least `limits.max_json_depth` at which a node sends batches: a batch nests its
    /// messages two levels deeper than they travel alone, so a node (and, sharing the
    /// cluster's settings, its peers) with a smaller limit sends each message alone.
    public static let minimumJSONDepth = 16

    /// Whether `message` may travel in a batch: calls and replies, the traffic of a busy
    /// connection.
    public static func mayCarry(_ message: WireMessage) -> Bool {
        switch message {
        case .call, .reply: true
        default: false
        }
    }

    /// One message to send, as the connection holds it: its JSON, and whether it may be
    /// batched (``mayCarry(_:)``).
    public struct Item: Sendable, Equatable {
        public var payload: [UInt8]
        public var batchable: Bool

        public init(payload: [UInt8], batchable: Bool) {
            self.payload = payload
            self.batchable = batchable
        }
    }

    /// One frame's worth of ``frames(carrying:maximumBytes:)``: its payload, and which
    /// items (by index) it carries.
    public struct Frame: Sendable, Equatable {
        public var payload: [UInt8]
        public var items: Range<Int>

        public init(payload: [UInt8], items: Range<Int>) {
            self.payload = payload
            self.items = items
        }
    }

    /// The frames that carry `items`, in order: consecutive batchable items go together
    /// in one batch (at most ``maximumCount`` of them and `maximumBytes` bytes, but at
    /// least one), every other item alone, and a batch of one as the message alone. So
    /// `[call, call, heartbeat, reply]` goes in three frames: a batch of the two calls,
    /// the heartbeat, the reply.
    public static func frames(carrying items: [Item], maximumBytes: Int = maximumBytes) -> [Frame] {
        var frames: [Frame] = []
        var start = 0
        var groupBytes = 0
        func close(at end: Int) {
            if end - start == 1 {
                frames.append(Frame(payload: items[start].payload, items: start..<end))
            } else if end - start > 1 {
                frames.append(Frame(payload: payload(joining: items[start..<end].map(\.payload)), items: start..<end))
            }
            start = end
            groupBytes = 0
        }
        for (index, item) in items.enumerated() {
            guard item.batchable else {
                close(at: index)
                frames.append(Frame(payload: item.payload, items: index..<index + 1))
                start = index + 1
                continue
            }
            if index > start, index - start == maximumCount || groupBytes + item.payload.count > maximumBytes { close(at: index) }
            groupBytes += item.payload.count
        }
        close(at: items.count)
        return frames
    }

    private static let opening = Array(#"{"type":"batch","body":["#.utf8)
    private static let closing = Array("]}".utf8)

    /// The JSON of a batch holding `payloads`, each the JSON of one message, joined as
    /// they are (nothing is decoded or encoded again).
    public static func payload(joining payloads: [[UInt8]]) -> [UInt8] {
        var bytes = opening
        bytes.reserveCapacity(opening.count + closing.count + payloads.reduce(payloads.count) { $0 + $1.count })
        for (index, payload) in payloads.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes += payload
        }
        bytes += closing
        return bytes
    }

    /// Why a received batch is refused: the connection is closed as for any malformed
    /// frame, with these words.
    public enum Malformed: Error, Sendable, Equatable, CustomStringConvertible {
        case empty
        case tooLong(count: Int)
        case carries(kind: String, at: Int)

        public var description: String {
            switch self {
            case .empty: "an empty batch"
            case .tooLong(let count): "a batch of \(count) messages; at most \(WireBatch.maximumCount)"
            case .carries(let kind, let index): "a batch carries calls and replies only, and message \(index) is \(kind)"
            }
        }
    }

    /// Checks a received batch's members (see ``Malformed``).
    public static func check(_ messages: [WireMessage]) throws(Malformed) {
        guard !messages.isEmpty else { throw .empty }
        guard messages.count <= maximumCount else { throw .tooLong(count: messages.count) }
        if let index = messages.firstIndex(where: { !mayCarry($0) }) { throw .carries(kind: messages[index].kind, at: index) }
    }
}
