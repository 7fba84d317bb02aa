import FoundationEssentials
import SpokesConcurrency
import Synchronization

/// The task kinds a node runs, by name. Thread-safe; register before tasks arrive.
///
/// ```swift
/// let registry = TaskRegistry(kinds: [PiSample()])   // bench.noop, bench.sleep and pi.sample
/// let node = try ClusterNode(settings: settings, registry: registry)
/// ```
///
/// Running a task, the registry checks the input against ``TaskLimits`` and the node's
/// JSON shape limits, decodes it, runs the kind, turns an error it throws into a
/// ``TaskError`` its submitter can read (``TaskError/init(kind:thrown:)``; the cluster's
/// own errors pass as they are), encodes the output with sorted keys and checks its size
/// before it is sent.
public final class TaskRegistry: Sendable {
    /// One registered kind, with its type erased: what running and costing a task needs.
    private struct Entry: Sendable {
        let schema: TaskSchema
        let cost: @Sendable (String) -> TaskCost
        let check: @Sendable (String, ClusterSettings) throws -> Void
        let run: @Sendable (String, TaskContext) async throws -> String
    }

    private let entries = Mutex<[String: Entry]>([:])

    /// The limits ``cost(kind:input:)`` checks an input against before decoding it.
    private static let defaultSettings = ClusterSettings()

    /// One decoder of inputs and one encoder of outputs for every task (they keep no
    /// state between values), not one of each made and dropped a task.
    private static let inputDecoder = JSONDecoder()
    /// With sorted keys: the same output prints the same on every node.
    private static let outputEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()

    /// The kinds every registry starts with: `bench.noop` and `bench.sleep`.
    public static var builtInKinds: [any TaskKind] { [NoopTask(), SleepTask()] }

    /// A registry with the built-in kinds and `kinds` (one of the same name as a built-in
    /// replaces it; ``validate(_:)`` refuses that).
    public init(kinds: [any TaskKind] = []) {
        register(Self.builtInKinds + kinds)
    }

    /// Checks that `kinds` can run side by side: each named by 1 to 100 letters, digits
    /// and `.`, `-`, `_`, with a version of 1 to 40 such characters, and no two with one
    /// name.
    public static func validate(_ kinds: [any TaskKind]) throws(TaskKindError) {
        func isPlain(_ text: String, longest: Int) -> Bool {
            (1...longest).contains(text.count) && text.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || ".-_".unicodeScalars.contains($0)) }
        }
        var seen: Set<String> = []
        for kind in kinds {
            let type = type(of: kind)
            guard isPlain(type.name, longest: 100) else { throw .invalidName(type.name) }
            guard isPlain(type.version, longest: 40) else { throw .invalidVersion(kind: type.name, version: type.version) }
            guard seen.insert(type.name).inserted else { throw .duplicateName(type.name) }
        }
    }

    /// Adds (or replaces) a kind under its name.
    public func register<Kind: TaskKind>(_ kind: Kind) {
        let name = Kind.name
        let entry = Entry(
            schema: Kind.schema,
            cost: { text in
                guard let input = try? Self.input(of: kind, from: text, settings: Self.defaultSettings) else { return Kind.cost }
                return kind.cost(of: input)
            },
            check: { text, settings in _ = try Self.input(of: kind, from: text, settings: settings) },
            run: { text, context in
                let input = try Self.input(of: kind, from: text, settings: context.system.settings)
                let output: Kind.Output
                do {
                    output = try await kind.run(input, context: context)
                } catch {
                    throw TaskError.passingOwn(error, kind: name)
                }
                let encoded = try Self.outputText(output)
                let limit = TaskLimits.maximumDataBytes(frameBytes: context.system.settings.maximumFrameSize)
                guard encoded.count <= limit else { throw TaskError.outputTooLarge(kind: name, bytes: encoded.count, limit: limit) }
                return String(decoding: encoded, as: UTF8.self)
            })
        entries.withLock { $0[name] = entry }
    }

    /// `text` as `kind`'s input: within ``TaskLimits`` and the JSON shape limits of
    /// `settings`, decoded, and accepted by the kind's ``TaskKind/validate(_:)`` (a
    /// refusal is ``TaskError/invalidInput(kind:reason:)``, or the ``OutOfRange`` it threw).
    private static func input<Kind: TaskKind>(of kind: Kind, from text: String, settings: ClusterSettings) throws -> Kind.Input {
        let limit = TaskLimits.maximumDataBytes(frameBytes: settings.maximumFrameSize)
        let bytes = Array(text.utf8)
        guard bytes.count <= limit else { throw TaskError.inputTooLarge(kind: Kind.name, bytes: bytes.count, limit: limit) }
        let input: Kind.Input
        do {
            try settings.jsonLimits.check(bytes)
            // In the hand form where the input has one (a `bench.noop` task's number),
            // as a call's arguments are; `JSONDecoder` reads the rest, with its errors.
            if let type = Kind.Input.self as? any HandWrittenArgument.Type, let value = type.init(handWrittenJSON: bytes[...]) as? Kind.Input {
                input = value
            } else {
                input = try Self.inputDecoder.decode(Kind.Input.self, from: Data(bytes))
            }
        } catch {
            throw TaskError.invalidInput(kind: Kind.name, reason: describeDecoding(error))
        }
        do {
            try kind.validate(input)
        } catch let error as OutOfRange {
            throw error
        } catch {
            throw TaskError.invalidInput(kind: Kind.name, reason: TaskError(kind: Kind.name, thrown: error).description)
        }
        return input
    }

    /// A task's output as the text its submitter gets: a whole number by hand (the text
    /// the encoder with sorted keys writes for it, byte for byte, without its generic
    /// path), anything else by that encoder.
    static func outputText<Output: Encodable>(_ output: Output) throws -> [UInt8] {
        if let number = output as? Int, let text = number.handWrittenJSON { return text }
        return Array(try outputEncoder.encode(output))
    }

    /// Adds (or replaces) each of `kinds` under its name.
    public func register(_ kinds: [any TaskKind]) {
        for kind in kinds { register(kind) }
    }

    /// Whether a kind named `kind` is registered.
    public func contains(_ kind: String) -> Bool { entries.withLock { $0[kind] != nil } }

    /// Names of the registered kinds, sorted.
    public var kinds: [String] { entries.withLock { $0.keys.sorted() } }

    /// The registered kinds as members advertise them, sorted by name.
    public var schemas: [TaskSchema] { entries.withLock { $0.values.map(\.schema) }.sorted { $0.name < $1.name } }

    /// The schema of the kind named `kind`, or nil when it is not registered.
    public func schema(of kind: String) -> TaskSchema? { entries.withLock { $0[kind]?.schema } }

    /// What a task of `kind` with `input` (its JSON) costs: the kind's ``TaskKind/cost(of:)``
    /// of the decoded input, or its declared ``TaskKind/cost`` when the input is not one
    /// the kind accepts (the task will fail anyway); nil when the kind is not registered. It decodes
    /// the input: a scheduler whose tasks share their cost-deciding fields (a job's
    /// tasks, usually) may ask once per job.
    public func cost(kind: String, input: String) -> TaskCost? {
        guard let entry = entries.withLock({ $0[kind] }) else { return nil }
        return entry.cost(input)
    }

    /// Checks `input` (JSON) as a task of `kind` would before running: its size
    /// (``TaskLimits``), its JSON shape (`settings.jsonLimits`), that it decodes, and the
    /// kind's own ``TaskKind/validate(_:)``. A submitter that runs the kind itself can
    /// refuse a bad input before sending it, naming its line.
    public func check(kind: String, input: String, settings: ClusterSettings) throws(TaskError) {
        guard let entry = entries.withLock({ $0[kind] }) else { throw .unknownKind(kind) }
        do {
            try entry.check(input, settings)
        } catch let error as TaskError {
            throw error
        } catch {
            throw .invalidInput(kind: kind, reason: "\(error)")
        }
    }

    /// Runs `request` with its registered kind; its output as JSON.
    func run(_ request: TaskRequest, context: TaskContext) async throws -> String {
        guard let entry = entries.withLock({ $0[request.kind] }) else { throw TaskError.unknownKind(request.kind) }
        return try await entry.run(request.input, context)
    }

    /// A decoding error as a person reads it: which field, and what was wrong.
    static func describeDecoding(_ error: any Error) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return path.isEmpty ? "" : " at \(path.hasPrefix(".") ? String(path.dropFirst()) : path)"
        }
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            return "missing field '\(key.stringValue)'\(path(context))"
        case DecodingError.typeMismatch(let type, let context):
            return "expected \(type)\(path(context)): \(context.debugDescription)"
        case DecodingError.valueNotFound(let type, let context):
            return "expected \(type)\(path(context)), found null"
        case DecodingError.dataCorrupted(let context):
            return "not valid JSON\(path(context)): \(context.debugDescription)"
        default:
            return "\(error)"
        }
    }
}

/// Why a set of task kinds cannot run side by side (``TaskRegistry/validate(_:)``).
public enum TaskKindError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidName(String)
    case invalidVersion(kind: String, version: String)
    case duplicateName(String)

    public var description: String {
        switch self {
        case .invalidName(let name):
            "task kind name '\(name)' must be 1 to 100 letters, digits, '.', '-' or '_' (e.g. 'pi.sample')"
        case .invalidVersion(let kind, let version):
            "task kind \(kind): version '\(version)' must be 1 to 40 letters, digits, '.', '-' or '_'"
        case .duplicateName(let name):
            "two task kinds are named '\(name)' (a built-in kind has that name, or the program lists it twice): rename one"
        }
    }
}

/// `bench.noop`: returns its input. Measures scheduling overhead.
public struct NoopTask: TaskKind {
    public static let name = "bench.noop"
    public init() {}
    public func run(_ input: Int, context: TaskContext) async throws -> Int { input }
}

/// `bench.sleep`: sleeps the given seconds (0 to an hour). Measures slot-bound scaling,
/// so it is declared ``TaskCost/cpu`` on purpose: it stands in for a task that holds a
/// slot for that long.
public struct SleepTask: TaskKind {
    public static let name = "bench.sleep"
    public init() {}
    public func run(_ input: Double, context: TaskContext) async throws -> Double {
        try OutOfRange.check("bench.sleep seconds", input, in: 0...3_600)
        try await context.system.runtime.sleep(for: input)
        return input
    }
}
