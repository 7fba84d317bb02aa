import Foundation
import SpokesClusterTestKit
import SpokesTestKit
import Synchronization
import Testing
@testable import SpokesCluster

/// What an eavesdropper sees of a cluster with a secret: every byte the simulated network
/// carried (handshakes, frames, beacons, probes), searched for what must stay private.
@Suite(.simulated, .hangGuard)
struct WireConfidentialityTests {
    static let secretText = "wire-confidentiality-test-secret"
    static let marker = "MARKER-7f3a9c"

    /// Two nodes named so their names are unmistakable, meeting, probing and calling
    /// each other with `marker` going out and coming back.
    func captureOfACallCarrying(_ marker: String, secret: Bool) async throws -> (capture: [UInt8], answer: String) {
        let cluster = try SimulatedCluster(2, prefix: "membername-", configure: { _, settings in
            if secret { settings.secret = try! ClusterSecret(Self.secretText, source: "test") }
        })
        defer { cluster.stop() }
        cluster.network.startCapture()
        let host = ClusterSystem.withWellKnownName("greeter") { Greeter(actorSystem: cluster[1].system) }
        defer { withExtendedLifetime(host) {} }
        try await cluster.awaitMesh()
        let greeter = try Greeter.resolve(id: ActorID(node: cluster[1].system.node, name: "greeter"), using: cluster[0].system)
        let answer = Mutex<String?>(nil)
        let call = Task { let greeting = try await greeter.greet(marker); answer.withLock { $0 = greeting } }
        try await cluster.run(until: "the greeting comes back", within: 5) { answer.withLock { $0 } != nil }
        try await call.value
        // Long enough for heartbeats, beacons and probes of every kind to go by.
        try await cluster.run(for: 2)
        return (cluster.network.capture, answer.withLock { $0 } ?? "")
    }

    @Test func withASecretNoPayloadNameOrSecretIsReadableOnTheWire() async throws {
        let (capture, answer) = try await captureOfACallCarrying(Self.marker, secret: true)
        #expect(answer.contains(Self.marker), "the call worked: \(answer)")
        #expect(capture.count > 1_000, "the capture holds the traffic: \(capture.count) bytes")
        for needle in [Self.marker, Self.secretText, "membername-0", "membername-1", "greet", "heartbeat"] {
            let readable = capture.contains(subsequence: Array(needle.utf8))
            #expect(!readable, "'\(needle)' is readable on the wire")
        }
    }

    /// The search can find what it looks for: without a secret (loopback only) the same
    /// traffic is in clear.
    @Test func withoutASecretTheSameCaptureShowsThePayloadAndTheNames() async throws {
        let (capture, _) = try await captureOfACallCarrying(Self.marker, secret: false)
        for needle in [Self.marker, "membername-0", "membername-1"] {
            let readable = capture.contains(subsequence: Array(needle.utf8))
            #expect(readable, "'\(needle)' travels in clear without a secret")
        }
    }
}
