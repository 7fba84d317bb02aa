import Foundation
import SpokesConcurrency
import Synchronization

/// The task kinds a node can run, by name. Thread-safe; register before tasks arrive.
public final class TaskRegistry: Sendable {
    typealias Runner = @Sendable (String, TaskContext) async throws -> String

    private let runners = Mutex<[String: Runner]>([:])

    /// A registry with the built-in benchmark kinds (`bench.noop`, `bench.sleep`).
    public init() {
        register(NoopTask())
        register(SleepTask())
    }

    /// Adds (or replaces) a kind under its name.
    public func register<Kind: TaskKind>(_ kind: Kind) {
        let runner: Runner = { text, context in
            let input: Kind.Input
            do {
                input = try JSONDecoder().decode(Kind.Input.self, from: Data(text.utf8))
            } catch {
                throw TaskError.invalidInput(kind: Kind.name, reason: "\(error)")
            }
            let output = try await kind.run(input, context: context)
            return String(decoding: try JSONEncoder().encode(output), as: UTF8.self)
        }
        runners.withLock { $0[Kind.name] = runner }
    }

    /// Whether a kind named `kind` is registered.
    public func contains(_ kind: String) -> Bool { runners.withLock { $0[kind] != nil } }

    /// Names of the registered kinds.
    public var kinds: [String] { runners.withLock { $0.keys.sorted() } }

    /// Runs `request` with its registered kind; its output as JSON.
    func run(_ request: TaskRequest, context: TaskContext) async throws -> String {
        guard let runner = runners.withLock({ $0[request.kind] }) else { throw TaskError.unknownKind(request.kind) }
        return try await runner(request.input, context)
    }
}

/// `bench.noop`: returns its input. Measures scheduling overhead.
public struct NoopTask: TaskKind {
    public static let name = "bench.noop"
    public init() {}
    public func run(_ input: Int, context: TaskContext) async throws -> Int { input }
}

/// `bench.sleep`: sleeps the given seconds (0 to an hour). Measures slot-bound scaling.
public struct SleepTask: TaskKind {
    public static let name = "bench.sleep"
    public init() {}
    public func run(_ input: Double, context: TaskContext) async throws -> Double {
        try OutOfRange.check("bench.sleep seconds", input, in: 0...3_600)
        try await Task.sleep(for: .clamped(seconds: input))
        return input
    }
}
