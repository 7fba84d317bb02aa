import Foundation
import Testing
@testable import SpokesCluster

@Suite struct WireMessageTests {
    let node = NodeID(name: "a", incarnation: 7)

    @Test func everyMessageRoundTripsThroughJSON() throws {
        let handshake = WireMessage.Handshake(cluster: "c", node: node, address: "127.0.0.1:1", slots: 4, authenticated: true, nonce: "ab")
        let messages: [WireMessage] = [
            .hello(handshake), .welcome(.init(handshake: handshake, proof: "cd")), .proof(.init(tag: "ef")),
            .refused(.init(reason: "no")), .unsupported(.init(reason: "what?")),
            .call(.init(id: 1, recipient: ActorID(node: node, name: "w"), target: "t", genericSubstitutions: ["Si"], arguments: ["1"])),
            .reply(.init(id: 1, outcome: .value("2"))), .reply(.init(id: 2, outcome: .void)),
            .reply(.init(id: 3, outcome: .error(type: "E", message: "m"))),
            .heartbeat(.init(sequence: 5)), .heartbeatAck(.init(sequence: 5)), .leave,
        ]
        for message in messages {
            let data = try JSONEncoder().encode(message)
            #expect(try JSONDecoder().decode(WireMessage.self, from: data) == message)
        }
    }

    @Test func usesATypeAndBodyEnvelope() throws {
        let text = String(decoding: try JSONEncoder().encode(WireMessage.heartbeat(.init(sequence: 1))), as: UTF8.self)
        #expect(text.contains("\"type\":\"heartbeat\""))
        #expect(text.contains("\"body\":{\"sequence\":1}"))
    }

    @Test func anUnknownTypeDecodesAsUnknownSoTheReceiverCanAnswerIt() throws {
        let data = Data(#"{"type": "teleport", "body": {"to": "mars"}}"#.utf8)
        #expect(try JSONDecoder().decode(WireMessage.self, from: data) == .unknown(type: "teleport"))
    }

    @Test func aKnownTypeWithTheWrongBodyIsADecodingError() {
        let data = Data(#"{"type": "heartbeat", "body": {"sequence": "one"}}"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(WireMessage.self, from: data) }
    }
}
