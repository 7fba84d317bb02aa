/// Why settings could not be loaded. `description` is the one-line message shown to
/// users; it always names the file and position, or the environment variable, at fault.
public enum ConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Where a rejected value was set.
    public enum Origin: Sendable, Hashable {
        /// In a YAML file, at the value's position.
        case file(source: String, location: YAMLLocation)
        /// In an environment variable.
        case environment(variable: String)
        /// In a command-line flag, e.g. `--slots`.
        case flag(String)
        /// In code, found by ``ClusterSettings/validate()``.
        case settings
    }

    /// The configuration file does not exist.
    case missingFile(String)
    /// The configuration file exists but cannot be read as UTF-8 text.
    case unreadableFile(String, reason: String)
    /// The file is not valid YAML (of the subset ``YAMLParser`` reads).
    case yaml(YAMLError)
    /// A key that is not a setting. `section` is nil at the top level; `suggestion` is the
    /// nearest known key if one is close, otherwise the message lists `knownKeys`.
    case unknownKey(source: String, location: YAMLLocation, key: String, section: String?, suggestion: String?, knownKeys: [String])
    /// A `SPOKES_*` variable that is not a setting but is so close to one that it is
    /// probably a misspelling of `suggestion`.
    case unknownVariable(String, suggestion: String)
    /// A value of the wrong type or out of range. `setting` is the YAML path, e.g.
    /// `node.slots`; `problem` completes the sentence, e.g. `must be …, got 'many'`.
    case invalidValue(Origin, setting: String, problem: String)
    /// A key or variable that was renamed: `seeds` is now `peers`.
    case renamed(Origin, old: String, new: String)
    /// A setting a release removed (``ClusterSettings/removedSettings``), with why.
    case removed(Origin, setting: String, why: String)
    /// The secret cannot be loaded (never shows the secret).
    case security(SecurityError)

    public var description: String {
        switch self {
        case .missingFile(let path):
            "configuration file not found: \(path)"
        case .unreadableFile(let path, let reason):
            "cannot read configuration file \(path): \(reason)"
        case .yaml(let error):
            error.description
        case .unknownKey(let source, let location, let key, let section, let suggestion, let knownKeys):
            "\(source):\(location): unknown key '\(key)' \(section.map { "in '\($0)'" } ?? "at the top level"). "
                + (suggestion.map { "Did you mean '\($0)'?" } ?? "Known keys: \(knownKeys.joined(separator: ", ")).")
        case .unknownVariable(let name, let suggestion):
            "unknown environment variable \(name). Did you mean \(suggestion)?"
        case .invalidValue(.file(let source, let location), let setting, let problem):
            "\(source):\(location): \(setting) \(problem)"
        case .invalidValue(.environment(let variable), _, let problem):
            "\(variable) \(problem)"
        case .invalidValue(.flag(let flag), _, let problem):
            "\(flag) \(problem)"
        case .invalidValue(.settings, let setting, let problem):
            "\(setting) \(problem)"
        case .renamed(.file(let source, let location), let old, let new):
            "\(source):\(location): '\(old)' was renamed to '\(new)'; write \(new): instead"
        case .renamed(.environment(let variable), _, let new):
            "\(variable) was renamed to \(ClusterSettings.environmentVariable(for: new)); set that instead"
        case .renamed(.flag(let flag), _, let new):
            "\(flag) was renamed; use --\(new.split(separator: ".").last ?? "")"
        case .renamed(.settings, let old, let new):
            "\(old) was renamed to \(new)"
        case .removed(.file(let source, let location), let setting, let why):
            "\(source):\(location): '\(setting)' was removed: \(why); delete it"
        case .removed(.environment(let variable), _, let why):
            "\(variable) was removed: \(why); unset it"
        case .removed(.flag(let flag), _, let why):
            "\(flag) was removed: \(why)"
        case .removed(.settings, let setting, let why):
            "\(setting) was removed: \(why)"
        case .security(let error):
            error.description
        }
    }
}
