import SpokesConcurrency

/// Whether a node's probe port answers, asked from outside the membership (`spokes
/// doctor`): a sealed `ping`, as a member's ``Prober`` sends, to the node's cluster
/// address over UDP, from a port of our own; a node answers any ping that opens with the
/// cluster's secret with an `ack` to where it came from, member or not. The ping is sent
/// at most three times, spread over the wait, so one lost datagram is not a verdict.
public enum ProbeCheck {
    /// The name of the node that answered a ping to `address` within `timeout` seconds
    /// (on `runtime`'s clock), or nil when none did. Sealed with `keyring`'s primary
    /// secret (nil: an open cluster). Throws when no UDP port can be bound here.
    public static func ask(_ address: SocketAddress, keyring: Keyring?, timeout: Double, runtime: Runtime) async throws -> String? {
        let seal = ProbeSeal(keyring: keyring.map(KeyringStore.init))
        let port = try runtime.network.bindDatagrams(on: SocketAddress(host: "0.0.0.0", port: 0), shared: false)
        defer { port.stop() }
        let nonce = runtime.seed() | 1
        let asker = NodeID(name: "doctor-\(String(nonce, radix: 16).prefix(8))", incarnation: 0)
        let answered = Promise<String, Never>()
        port.startReceiving(maximumSize: ProbeSeal.maximumSize) { bytes, _ in
            if case .accepted(.ack(nonce, _, let about)) = seal.open(bytes) { answered.resolve(about.name) }
        }
        let ping = seal.seal(.ping(nonce: nonce, from: asker))
        let attempts = 3
        let sender = Task {
            for _ in 0..<attempts {
                port.send(ping, to: address)
                try await runtime.sleep(for: timeout / Double(attempts))
            }
        }
        defer { sender.cancel() }
        return try? await withTimeout(seconds: timeout, clock: runtime.clock) { await answered.future.value }
    }
}
