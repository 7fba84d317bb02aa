/// Why a ``Service`` could not deliver its data. Each case names the file or URL at
/// fault and, for bad content, where in it.
public enum ServiceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file does not exist. Carries the path as the user gave it, e.g. `missingFile("Madrid.json")`.
    case missingFile(String)
    /// The file exists but could not be read (a directory, no permission, ...).
    case unreadableFile(String, reason: String)
    /// The text is not JSON; `line` and `column` point at the first error.
    case invalidJSON(source: String, line: Int, column: Int, reason: String)
    /// The JSON is well formed but not what was expected; `path` is where, e.g. `network.stations[3].free_bikes`.
    case invalidContent(source: String, path: String, reason: String)
    /// A URL could not be fetched.
    case requestFailed(url: String, reason: String)

    public var description: String {
        switch self {
        case .missingFile(let path):
            "file not found: \(path)"
        case .unreadableFile(let path, let reason):
            "cannot read \(path): \(reason)"
        case .invalidJSON(let source, let line, let column, let reason):
            "\(source):\(line):\(column): invalid JSON: \(reason)"
        case .invalidContent(let source, let path, let reason):
            "\(source): \(path.isEmpty ? "top level" : path): \(reason)"
        case .requestFailed(let url, let reason):
            "cannot fetch \(url): \(reason)"
        }
    }
}
