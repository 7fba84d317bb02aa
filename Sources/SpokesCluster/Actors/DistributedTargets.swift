import Distributed
import Synchronization

/// The distributed functions a ``ClusterSystem`` has run, each with what the runtime
/// needs to run it again: the types of its parameters and of its result.
///
/// Why: the standard library's `executeDistributedTarget` demangles the function's name
/// three times on every call to find them (its parameter count, their types, its result
/// type): half of the cost of dispatching a call, paid again for every heartbeat of Raft
/// and every task. Here they are found once per function, with the standard library's
/// own lookups, and a later call goes straight to the runtime's entry that runs a
/// function by name, `swift_distributed_execute_target`, with the arguments the standard
/// library passes it (``run(_:on:target:decoder:handler:system:)``). Generic functions,
/// and names whose types the runtime cannot read, take the standard library's path,
/// which reports what is wrong.
///
/// That entry is the Swift runtime's, not public API: its declaration below is the one
/// the Distributed module makes (Swift 6.3); ARCHITECTURE.md, "Known toolchain limits",
/// says so. Every call a node receives goes through it, so the unit lane's tests of
/// calls (values, errors, `Void`, actors as arguments, hand-written arguments) prove it
/// on each toolchain.
///
/// Bounded: at most ``capacity`` functions are kept (a binary has far fewer distributed
/// functions; names a peer makes up beyond that are found each time, as before).
final class DistributedTargets: Sendable {
    /// A function's parameter types, in order, and its result type.
    struct Signature: Sendable {
        let argumentTypes: [any Any.Type]
        let returnType: any Any.Type
    }

    static let capacity = 512

    private let signatures = Mutex<[String: Signature]>([:])

    /// The signature of the non-generic function named `target` (a plain mangled name:
    /// ``ClusterInvocationDecoder/isPlainMangledName(_:)``), found once; nil for a
    /// generic function or a name the runtime cannot read.
    func signature(of target: String) -> Signature? {
        if let known = knownSignature(of: target) { return known }
        guard let found = Self.find(target) else { return nil }
        signatures.withLock { signatures in
            if signatures.count < Self.capacity { signatures[target] = found }
        }
        return found
    }

    /// The signature of `target` if it was found before (so it is a plain mangled name).
    func knownSignature(of target: String) -> Signature? {
        signatures.withLock { $0[target] }
    }

    /// What `executeDistributedTarget` finds before it runs a non-generic target, with
    /// the same lookups.
    private static func find(_ target: String) -> Signature? {
        let name = Array(target.utf8)
        return name.withUnsafeBufferPointer { name -> Signature? in
            guard let start = name.baseAddress else { return nil }
            let length = UInt(name.count)
            // A generic function's types depend on the call's substitutions.
            guard _getGenericEnvironmentOfDistributedTarget(start, length) == nil else { return nil }
            let count = __getParameterCount(start, length)
            guard count >= 0 else { return nil }
            let types = UnsafeMutableBufferPointer<any Any.Type>.allocate(capacity: max(Int(count), 1))
            defer { types.deallocate() }
            let decoded = __getParameterTypeInfo(start, length, nil, nil, types.baseAddress!._rawValue, Int(count))
            guard decoded == count, let returnType = __getReturnTypeInfo(start, length, nil, nil) else { return nil }
            return Signature(argumentTypes: Array(types.prefix(Int(count))), returnType: returnType)
        }
    }

    /// Runs `target` (of `signature`) on `actor` as `executeDistributedTarget` does once
    /// it has found the signature: arguments from `decoder`, the outcome to `handler`.
    static func run(
        _ signature: Signature, on actor: any DistributedActor, target: String,
        decoder: inout ClusterInvocationDecoder, handler: ClusterResultHandler, system: ClusterSystem
    ) async throws {
        let count = signature.argumentTypes.count
        let argumentTypes = UnsafeMutablePointer<any Any.Type>.allocate(capacity: max(count, 1))
        argumentTypes.initialize(from: signature.argumentTypes, count: count)
        defer {
            argumentTypes.deinitialize(count: count)
            argumentTypes.deallocate()
        }
        func allocate<Result>(_: Result.Type) -> UnsafeMutableRawPointer {
            UnsafeMutableRawPointer(UnsafeMutablePointer<Result>.allocate(capacity: 1))
        }
        let result = _openExistential(signature.returnType, do: allocate)
        defer {
            func deallocate<Result>(_: Result.Type) { result.assumingMemoryBound(to: Result.self).deallocate() }
            _openExistential(signature.returnType, do: deallocate)
        }
        let name = Array(target.utf8)
        do {
            try await executeDistributedTargetNamed(
                on: actor, name, UInt(name.count), argumentDecoder: &decoder,
                argumentTypes: UnsafeMutableRawPointer(argumentTypes), resultBuffer: result,
                substitutions: nil, witnessTables: nil, numWitnessTables: 0)
            if signature.returnType == Void.self {
                try await handler.onReturnVoid()
            } else {
                try await system.invokeHandlerOnReturn(handler: handler, resultBuffer: UnsafeRawPointer(result), metatype: signature.returnType)
            }
        } catch {
            try await handler.onThrow(error: error)
        }
    }
}

/// The Swift runtime's entry that runs a distributed function by its mangled name: finds
/// its accessor, which decodes each argument with `argumentDecoder` into storage of
/// `argumentTypes`, calls the function on `actor` and leaves its result in
/// `resultBuffer`. Declared as the Distributed module declares it for
/// `executeDistributedTarget` (its raw pointers are `Builtin.RawPointer` there, one
/// pointer either way).
@_silgen_name("swift_distributed_execute_target")
private func executeDistributedTargetNamed<Decoder: DistributedTargetInvocationDecoder>(
    on actor: AnyObject,
    _ targetName: UnsafePointer<UInt8>, _ targetNameLength: UInt,
    argumentDecoder: inout Decoder,
    argumentTypes: UnsafeMutableRawPointer,
    resultBuffer: UnsafeMutableRawPointer,
    substitutions: UnsafeRawPointer?,
    witnessTables: UnsafeRawPointer?,
    numWitnessTables: UInt
) async throws
