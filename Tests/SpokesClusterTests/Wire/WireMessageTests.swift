import Foundation
import Testing
@testable import SpokesCluster

@Suite struct WireMessageTests {
    let node = NodeID(name: "a", incarnation: 7)

    @Test func everyMessageRoundTripsThroughJSON() throws {
        let handshake = WireMessage.Handshake(cluster: "c", node: node, address: "127.0.0.1:1", slots: 4)
        let messages: [WireMessage] = [
            .hello(handshake), .welcome(handshake), .refused(.init(reason: "no")),
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

    @Test func anUnknownTypeIsADecodingErrorThatNamesIt() {
        let data = Data(#"{"type": "teleport", "body": {}}"#.utf8)
        do {
            _ = try JSONDecoder().decode(WireMessage.self, from: data)
            Issue.record("decoded an unknown type")
        } catch DecodingError.dataCorrupted(let context) {
            #expect(context.debugDescription == "unknown message type 'teleport'")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}
