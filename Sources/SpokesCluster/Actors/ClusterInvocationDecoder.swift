import Distributed
import Foundation

/// Reads back a ``WireMessage/Call`` for `executeDistributedTarget`. Arguments are
/// decoded with the actor system in the decoder's `userInfo`, so distributed actor
/// references among them resolve to local actors or remote proxies.
public struct ClusterInvocationDecoder: DistributedTargetInvocationDecoder {
    public typealias SerializationRequirement = any Codable

    private let call: WireMessage.Call
    private let decoder: JSONDecoder
    private var nextArgument = 0

    init(call: WireMessage.Call, system: ClusterSystem) {
        self.call = call
        decoder = JSONDecoder()
        decoder.userInfo[.actorSystemKey] = system
    }

    public mutating func decodeGenericSubstitutions() throws -> [Any.Type] {
        try call.genericSubstitutions.map { name in
            guard let type = _typeByName(name) else {
                throw RemoteCallError.serializationFailed("unknown generic type \(name)")
            }
            return type
        }
    }

    public mutating func decodeNextArgument<Argument: Codable>() throws -> Argument {
        guard nextArgument < call.arguments.count else {
            throw RemoteCallError.serializationFailed("call \(call.target) has too few arguments")
        }
        defer { nextArgument += 1 }
        do {
            return try decoder.decode(Argument.self, from: Data(call.arguments[nextArgument].utf8))
        } catch {
            throw RemoteCallError.serializationFailed("argument \(nextArgument) of \(call.target) is not a \(Argument.self): \(error)")
        }
    }

    public mutating func decodeErrorType() throws -> Any.Type? { nil }

    public mutating func decodeReturnType() throws -> Any.Type? { nil }
}
