import Distributed
import FoundationEssentials

/// Turns the outcome of a locally executed distributed call into a reply.
public struct ClusterResultHandler: DistributedTargetInvocationResultHandler {
    public typealias SerializationRequirement = any Codable

    let reply: @Sendable (WireMessage.Reply.Outcome) -> Void
    /// Where a refusal of a peer's number (``OutOfRange``) is counted.
    let rejections: RejectionCounters

    /// One encoder for every reply (it keeps no state between calls), not one a reply.
    private static let encoder = JSONEncoder()

    public func onReturn<Success: Codable>(value: Success) async throws {
        // A result the caller reads by hand (a bike job's batch outcomes) is written so.
        if let handWritten = (value as? any HandWrittenArgument)?.handWrittenJSON {
            return reply(.value(String(decoding: handWritten, as: UTF8.self)))
        }
        do {
            reply(.value(String(decoding: try Self.encoder.encode(value), as: UTF8.self)))
        } catch {
            reply(.error(type: "SerializationError", message: "cannot encode the result: \(error)"))
        }
    }

    public func onReturnVoid() async throws {
        reply(.void)
    }

    public func onThrow<Err: Error>(error: Err) async throws {
        if error is OutOfRange { rejections.count(.valueOutOfRange) }
        // The type's name as `String(describing:)` gives it, without its search of the
        // metatype's conformances for a description.
        reply(.error(type: _typeName(type(of: error as any Error), qualified: false), message: String(describing: error)))
    }
}
