import Distributed
import FoundationEssentials

/// Reads back a ``WireMessage/Call`` for `executeDistributedTarget`. Arguments are
/// decoded with the actor system in the decoder's `userInfo`, so distributed actor
/// references among them resolve to local actors or remote proxies; a
/// ``HandWrittenArgument`` in its own form is read by hand.
public struct ClusterInvocationDecoder: DistributedTargetInvocationDecoder {
    public typealias SerializationRequirement = any Codable

    private let call: WireMessage.Call
    private let system: ClusterSystem
    /// Made at the first argument without a hand form (``ClusterSystem/argumentDecoder()``),
    /// then used for the call's others.
    private var decoder: JSONDecoder?
    private let limits: JSONShapeLimits
    private var nextArgument = 0

    init(call: WireMessage.Call, system: ClusterSystem) {
        self.call = call
        self.system = system
        limits = system.settings.jsonLimits
    }

    public mutating func decodeGenericSubstitutions() throws -> [Any.Type] {
        try call.genericSubstitutions.map { name in
            guard Self.isPlainMangledName(name), let type = _typeByName(name) else {
                throw RemoteCallError.serializationFailed("unknown generic type \(name.prefix(200))")
            }
            return type
        }
    }

    /// Whether `name` can be handed to the runtime's type lookup. Mangled names may embed
    /// symbolic references (control bytes followed by relative addresses), which the
    /// runtime would follow into arbitrary memory: names from a peer may hold only
    /// letters, digits, `_`, `$` and `.`, and at most 1,024 of them.
    static func isPlainMangledName(_ name: String) -> Bool {
        name.utf8.count <= 1024 && !name.isEmpty && name.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "$") || byte == UInt8(ascii: ".")
        }
    }

    public mutating func decodeNextArgument<Argument: Codable>() throws -> Argument {
        guard nextArgument < call.arguments.count else {
            throw RemoteCallError.serializationFailed("call \(call.target) has too few arguments")
        }
        defer { nextArgument += 1 }
        let text = Array(call.arguments[nextArgument].utf8)
        do {
            try limits.check(text)
        } catch {
            throw RemoteCallError.serializationFailed("argument \(nextArgument) of \(call.target): \(error)")
        }
        if let type = Argument.self as? any HandWrittenArgument.Type, let value = type.init(handWrittenJSON: text[...]) as? Argument {
            return value
        }
        do {
            let decoder = self.decoder ?? system.argumentDecoder()
            self.decoder = decoder
            return try decoder.decode(Argument.self, from: Data(text))
        } catch {
            throw RemoteCallError.serializationFailed("argument \(nextArgument) of \(call.target) is not a \(Argument.self): \(error)")
        }
    }

    public mutating func decodeErrorType() throws -> Any.Type? { nil }

    public mutating func decodeReturnType() throws -> Any.Type? { nil }
}
