import Distributed
import FoundationEssentials

/// Records a distributed call (generic substitutions, then each argument as JSON: by
/// hand for a ``HandWrittenArgument``, else by `JSONEncoder`) into the fields of a
/// ``WireMessage/Call``.
public struct ClusterInvocationEncoder: DistributedTargetInvocationEncoder {
    public typealias SerializationRequirement = any Codable

    var genericSubstitutions: [String] = []
    var arguments: [String] = []
    /// One encoder for every call's arguments that have no hand form (it keeps no state
    /// between calls), not one a call: a call whose arguments are all hand-written (a
    /// task's request, a Raft delivery) made and dropped an encoder it never used.
    private static let encoder = JSONEncoder()

    public mutating func recordGenericSubstitution<T>(_ type: T.Type) throws {
        guard let name = _mangledTypeName(type) else {
            throw RemoteCallError.serializationFailed("generic type \(type) has no mangled name")
        }
        genericSubstitutions.append(name)
    }

    public mutating func recordArgument<Value: Codable>(_ argument: RemoteCallArgument<Value>) throws {
        if let handWritten = (argument.value as? any HandWrittenArgument)?.handWrittenJSON {
            return arguments.append(String(decoding: handWritten, as: UTF8.self))
        }
        do {
            arguments.append(String(decoding: try Self.encoder.encode(argument.value), as: UTF8.self))
        } catch {
            throw RemoteCallError.serializationFailed("argument \(argument.label ?? argument.name): \(error)")
        }
    }

    public mutating func recordErrorType<E: Error>(_ type: E.Type) throws {}

    public mutating func recordReturnType<R: Codable>(_ type: R.Type) throws {}

    public mutating func doneRecording() throws {}
}
