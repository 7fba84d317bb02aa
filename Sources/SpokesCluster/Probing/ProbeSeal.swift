import FoundationEssentials
import Glibc

/// Seals and opens probe datagrams, sans-IO: `{"m": MESSAGE, "s": SEALED}`. In a
/// cluster with a secret the message's JSON is sealed (``SealedBox``, base64 in `s`,
/// `m` empty), so nobody without the secret reads who probes whom or forges a probe; in
/// an open cluster `m` holds the JSON text and `s` is empty.
///
/// A seal stops anyone without the secret from answering a probe or asking a node to
/// probe another. A recorded datagram played back gains nothing: an `ack` counts only
/// for a probe still outstanding, whose nonce is fresh (see ``Prober``), and a replayed
/// `ping` or `pingRequest` only makes a node send one datagram to a member it knows.
/// Public for the simulator, which reads whom the probe acks it delivers are about.
public struct ProbeSeal: Sendable {
    /// Largest datagram sent or read.
    static let maximumSize = 1024

    private struct Envelope: Codable {
        var m: String
        var s: String
    }

    /// What to do with a datagram.
    public enum Outcome: Sendable, Equatable {
        case accepted(Prober.Message)
        /// A probe of a cluster with a secret, at an open node: not for us.
        case ignored
        case rejected(Rejection)
    }

    /// The node's secrets: probes are sealed with the primary and opened with any.
    private let keyring: KeyringStore?

    public init(keyring: KeyringStore?) {
        self.keyring = keyring
    }

    /// A probe seal holding `secret` alone (nil: an open cluster).
    init(secret: ClusterSecret?) {
        self.init(keyring: secret.map { KeyringStore(Keyring(primary: $0)) })
    }

    /// Written by hand (``ProbeCodec``), as bytes every release's `JSONDecoder` reads.
    func seal(_ message: Prober.Message) -> [UInt8] {
        let body = ProbeCodec.encode(message)
        if let keyring { return ProbeCodec.envelope(m: "", s: Data(keyring.primary.probes.seal(body)).base64EncodedString()) }
        return ProbeCodec.envelope(m: String(decoding: body, as: UTF8.self), s: "")
    }

    /// Read by hand in the form ``seal(_:)`` writes, and by `JSONDecoder` in any other
    /// (an earlier release's key order); the same outcome either way.
    public func open<Bytes: Collection<UInt8>>(_ datagram: Bytes) -> Outcome {
        guard datagram.count <= Self.maximumSize else { return .rejected(.malformedProbe) }
        let bytes = Array(datagram)
        guard let envelope = ProbeCodec.envelope(bytes[...]).map({ Envelope(m: $0.m, s: $0.s) })
            ?? (try? JSONDecoder().decode(Envelope.self, from: Data(bytes)))
        else { return .rejected(.malformedProbe) }
        let body: [UInt8]
        if let keyring {
            guard let sealed = Data(base64Encoded: envelope.s),
                  let opened = keyring.all.lazy.compactMap({ $0.probes.open(sealed) }).first
            else { return .rejected(.unauthenticatedProbe) }
            body = opened
        } else if !envelope.s.isEmpty {
            return .ignored
        } else {
            body = Array(envelope.m.utf8)
        }
        guard let message = ProbeCodec.message(body[...]) ?? (try? JSONDecoder().decode(Prober.Message.self, from: Data(body))) else {
            return .rejected(.malformedProbe)
        }
        return .accepted(message)
    }
}
