import FoundationEssentials
import SpokesConcurrency

/// Where some decodable data comes from, as a protocol witness: a value holding the
/// closure that gets it. Code that needs a network does not care whether it comes from
/// a file, a URL or a test's literal value.
///
/// ```swift
/// let city = try await Service<City>.file(at: "Milano.json").get()
/// let live = try await Service<City>.url(URL(string: "https://api.citybik.es/v2/networks/bikemi")!).get() // SpokesBikesWeb
/// ```
///
/// Fetching over HTTP(S) (`Service.url`) lives in the `SpokesBikesWeb` module, so that a
/// node, which never fetches, does not link FoundationNetworking and libcurl.
public struct Service<Value: Decodable & Sendable>: Sendable {
    /// Delivers the value, or throws a ``ServiceError``.
    public let get: @Sendable () async throws -> Value

    public init(get: @escaping @Sendable () async throws -> Value) {
        self.get = get
    }

    /// A service that always delivers `value` (for tests and mocks).
    public static func value(_ value: Value) -> Service {
        Service { value }
    }

    /// Reads and decodes the file at `path` now, so a missing or bad file is reported
    /// where the service is made.
    public static func file(at path: String) throws(ServiceError) -> Service {
        let value = try decode(readFile(at: path), source: path)
        return .value(value)
    }

    /// Decodes `data`, naming `source` in any error.
    public static func data(_ data: Data, source: String) throws(ServiceError) -> Service {
        .value(try decode(data, source: source))
    }

    /// The file's bytes, or a ``ServiceError`` naming it.
    public static func readFile(at path: String) throws(ServiceError) -> Data {
        var isDirectory = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw .missingFile(path)
        }
        if isDirectory {
            throw .unreadableFile(path, reason: "it is a directory")
        }
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .unreadableFile(path, reason: DiskError.reason(of: error))
        }
    }

    /// Decodes JSON, turning Foundation's errors into ones that say where the problem is.
    public static func decode(_ data: Data, source: String) throws(ServiceError) -> Value {
        do {
            return try JSONDecoder().decode(Value.self, from: data)
        } catch let error as DecodingError {
            if let syntax = JSONSyntaxLocator().firstError(in: data) {
                throw .invalidJSON(source: source, line: syntax.line, column: syntax.column, reason: syntax.reason)
            }
            throw ServiceError(error, source: source)
        } catch {
            throw .invalidContent(source: source, path: "", reason: "\(error)")
        }
    }
}

extension ServiceError {
    /// Describes a decoding error by the JSON path where it happened.
    init(_ error: DecodingError, source: String) {
        switch error {
        case .keyNotFound(let key, let context):
            self = .invalidContent(
                source: source, path: Self.path(context.codingPath),
                reason: "missing required key '\(key.stringValue)'")
        case .typeMismatch(let type, let context):
            self = .invalidContent(
                source: source, path: Self.path(context.codingPath),
                reason: "expected \(Self.jsonKind(of: type))")
        case .valueNotFound(let type, let context):
            self = .invalidContent(
                source: source, path: Self.path(context.codingPath),
                reason: "expected \(Self.jsonKind(of: type)), found null")
        case .dataCorrupted(let context):
            self = .invalidContent(
                source: source, path: Self.path(context.codingPath), reason: context.debugDescription)
        @unknown default:
            self = .invalidContent(source: source, path: "", reason: "\(error)")
        }
    }

    /// `network.stations[3].free_bikes` from a coding path.
    static func path(_ codingPath: [any CodingKey]) -> String {
        var text = ""
        for key in codingPath {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text
    }

    private static func jsonKind(of type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Double.Type: "a number"
        case is Bool.Type: "true or false"
        default: "a value of type \(type)"
        }
    }
}
