import Foundation
import Testing
@testable import SpokesCluster

/// Many calls and replies in one frame (protocol 6), pure: the batch's JSON round trip,
/// how queued messages are grouped into frames within the limits, and what a receiver
/// refuses.
@Suite struct WireBatchTests {
    let node = NodeID(name: "a", incarnation: 7)

    func call(_ id: UInt64, argument: String = "1") -> WireMessage {
        .call(.init(id: id, recipient: ActorID(node: node, name: "worker"), target: "$s4main1fyyF", genericSubstitutions: [], arguments: [argument]))
    }

    func json(_ message: WireMessage) throws -> [UInt8] { Array(try JSONEncoder().encode(message)) }

    func decode(_ bytes: [UInt8]) throws -> WireMessage { try JSONDecoder().decode(WireMessage.self, from: Data(bytes)) }

    func item(_ message: WireMessage) throws -> WireBatch.Item {
        WireBatch.Item(payload: try json(message), batchable: WireBatch.mayCarry(message))
    }

    @Test func aBatchJoinedFromItsMembersJSONDecodesAsTheMessagesInOrder() throws {
        let messages: [WireMessage] = [call(1), .reply(.init(id: 9, outcome: .value("\"ok\""))), call(2), .reply(.init(id: 10, outcome: .void))]
        let joined = WireBatch.payload(joining: try messages.map(json))
        #expect(try decode(joined) == .batch(messages))
        // The encoder's form of the same batch decodes alike.
        #expect(try decode(try json(.batch(messages))) == .batch(messages))
        #expect(WireMessage.batch(messages).kind == "batch")
    }

    @Test func queuedCallsAndRepliesShareFramesAndEverythingElseGoesAlone() throws {
        let items = try [call(1), call(2), .heartbeat(.init(sequence: 1)), .reply(.init(id: 3, outcome: .void)), .leave, call(4), .reply(.init(id: 5, outcome: .void))]
            .map(item)
        let frames = WireBatch.frames(carrying: items)
        #expect(frames.map(\.items) == [0..<2, 2..<3, 3..<4, 4..<5, 5..<7])
        #expect(try decode(frames[0].payload) == .batch([call(1), call(2)]))
        #expect(frames[1].payload == items[2].payload, "a heartbeat goes as it always did")
        #expect(frames[2].payload == items[3].payload, "a batch of one is the message alone")
        #expect(try decode(frames[4].payload) == .batch([call(4), .reply(.init(id: 5, outcome: .void))]))
        // A lone call is exactly today's frame: nothing waits, nothing changes on the wire.
        let lone = try item(call(7))
        #expect(WireBatch.frames(carrying: [lone]) == [WireBatch.Frame(payload: lone.payload, items: 0..<1)])
        #expect(WireBatch.frames(carrying: []).isEmpty)
    }

    @Test func aBatchHoldsAtMostTheMaximumCountAndBytes() throws {
        let many = try (0..<UInt64(WireBatch.maximumCount + 5)).map { try item(call($0)) }
        let byCount = WireBatch.frames(carrying: many, maximumBytes: .max)
        #expect(byCount.map(\.items) == [0..<WireBatch.maximumCount, WireBatch.maximumCount..<many.count])
        // By bytes: each call is the same size, so a batch holds what fits.
        let size = many[0].payload.count
        let byBytes = WireBatch.frames(carrying: Array(many.prefix(10)), maximumBytes: 3 * size)
        #expect(byBytes.map(\.items) == [0..<3, 3..<6, 6..<9, 9..<10])
        // A message larger than a batch's bytes still goes, alone.
        let large = try item(call(99, argument: String(repeating: "x", count: 200)))
        let frames = WireBatch.frames(carrying: [many[0], large, many[1]], maximumBytes: 100)
        #expect(frames.map(\.items) == [0..<1, 1..<2, 2..<3])
        #expect(frames.allSatisfy { $0.payload.count <= 100 || $0.items.count == 1 })
    }

    @Test func aMalformedBatchIsADecodingErrorThatSaysWhy() throws {
        func refusal(_ text: String) -> String {
            do {
                _ = try decode(Array(text.utf8))
                return "decoded"
            } catch let DecodingError.dataCorrupted(context) {
                return context.debugDescription
            } catch {
                return "\(error)"
            }
        }
        let callText = String(decoding: try json(call(1)), as: UTF8.self)
        let hello = String(decoding: try json(.hello(.init(cluster: "c", node: node, address: "", slots: 0))), as: UTF8.self)
        #expect(refusal(#"{"type":"batch","body":[]}"#) == "an empty batch")
        #expect(refusal(#"{"type":"batch","body":[\#(callText),\#(hello)]}"#) == "a batch carries calls and replies only, and message 1 is hello")
        #expect(refusal(#"{"type":"batch","body":[{"type":"batch","body":[\#(callText)]}]}"#) == "a batch carries calls and replies only, and message 0 is batch")
        #expect(refusal(#"{"type":"batch","body":[{"type":"teleport"}]}"#).contains("message 0 is unknown type 'teleport'"))
        let tooMany = Array(repeating: callText, count: WireBatch.maximumCount + 1).joined(separator: ",")
        #expect(refusal(#"{"type":"batch","body":[\#(tooMany)]}"#) == "a batch of \(WireBatch.maximumCount + 1) messages; at most \(WireBatch.maximumCount)")
        // Not an array, a member that is not a message, no body: decoding errors too.
        for text in [#"{"type":"batch","body":{"id":1}}"#, #"{"type":"batch","body":[1,2]}"#, #"{"type":"batch"}"#, #"{"type":"batch","body":[\#(callText)"#] {
            #expect(throws: (any Error).self, "\(text)") { try decode(Array(text.utf8)) }
        }
    }

    @Test func onlyCallsAndRepliesMayTravelInABatch() {
        #expect(WireBatch.mayCarry(call(1)) && WireBatch.mayCarry(.reply(.init(id: 1, outcome: .void))))
        let others: [WireMessage] = [.heartbeat(.init(sequence: 1)), .heartbeatAck(.init(sequence: 1)), .leave, .refused(.init(reason: "no")),
                                     .unsupported(.init(reason: "?")), .batch([call(1)]), .proof(.init(tag: ""))]
        #expect(others.allSatisfy { !WireBatch.mayCarry($0) })
    }
}
