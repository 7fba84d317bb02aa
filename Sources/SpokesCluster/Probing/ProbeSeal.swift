import Foundation

/// Seals and opens probe datagrams, sans-IO: `{"m": MESSAGE, "t": TAG}` with the
/// message's JSON text and, in a cluster with a secret, `HMAC(K, message)` under the
/// secret's probe key in hex (without a secret, an open cluster, the tag is empty).
///
/// A tag stops anyone without the secret from answering a probe or asking a node to
/// probe another. A recorded datagram played back gains nothing: an `ack` counts only
/// for a probe still outstanding, whose nonce is fresh (see ``Prober``), and a replayed
/// `ping` or `pingRequest` only makes a node send one datagram to a member it knows.
struct ProbeSeal: Sendable {
    /// Largest datagram sent or read.
    static let maximumSize = 1024

    private struct Envelope: Codable {
        var m: String
        var t: String
    }

    /// What to do with a datagram.
    enum Outcome: Sendable, Equatable {
        case accepted(Prober.Message)
        /// A probe of a cluster with a secret, at an open node: not for us.
        case ignored
        case rejected(Rejection)
    }

    private let key: HMAC?

    init(secret: ClusterSecret?) {
        key = secret?.key(for: .probe)
    }

    func seal(_ message: Prober.Message) -> [UInt8] {
        let body = (try? JSONEncoder().encode(message)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        let tag = key.map { $0.authenticationCode(for: Array(body.utf8)).hex } ?? ""
        return Array((try? JSONEncoder().encode(Envelope(m: body, t: tag))) ?? Data())
    }

    func open<Bytes: Collection<UInt8>>(_ datagram: Bytes) -> Outcome {
        guard datagram.count <= Self.maximumSize, let envelope = try? JSONDecoder().decode(Envelope.self, from: Data(datagram)) else {
            return .rejected(.malformedProbe)
        }
        if let key {
            guard !envelope.t.isEmpty,
                  constantTimeEquals(Array(envelope.t.utf8), Array(key.authenticationCode(for: Array(envelope.m.utf8)).hex.utf8))
            else { return .rejected(.unauthenticatedProbe) }
        } else if !envelope.t.isEmpty {
            return .ignored
        }
        guard let message = try? JSONDecoder().decode(Prober.Message.self, from: Data(envelope.m.utf8)) else { return .rejected(.malformedProbe) }
        return .accepted(message)
    }
}
