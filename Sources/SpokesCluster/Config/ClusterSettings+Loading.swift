import FoundationEssentials
import Glibc
import SpokesConcurrency

/// Layering settings: defaults, then a YAML file, then `SPOKES_*` environment
/// variables (the CLI applies its flags last). Each layer is checked as a whole when
/// applied, so an error always points at the file position or variable that caused it.
extension ClusterSettings {
    /// The variable holding the cluster secret itself (rather than a file's path).
    public static let secretVariable = "SPOKES_SECRET"

    /// Environment variables starting with `SPOKES_` that are not setting paths:
    /// never reported as misspellings.
    public static let reservedVariables: Set<String> = [secretVariable, Runtime.protocolOnPoolVariable]

    /// `SPOKES_` + the path upper-cased with `.` as `_`: `node.port` is `SPOKES_NODE_PORT`.
    public static func environmentVariable(for path: String) -> String {
        "SPOKES_" + String(path.uppercased().map { $0 == "." ? "_" : $0 })
    }

    /// Defaults, overridden by `file` (if given) and then by `SPOKES_*` variables in
    /// `environment`; then the secret, from `SPOKES_SECRET` or else `secret_file`.
    public static func load(file: String?, environment: [String: String]) throws(ConfigurationError) -> ClusterSettings {
        try loadLayers(file: file, environment: environment).settings
    }

    /// Like ``load(file:environment:)``, and also the paths of the settings that the file
    /// or the environment set (e.g. `cluster`), so a caller can tell a chosen value from
    /// a default.
    public static func loadLayers(file: String?, environment: [String: String]) throws(ConfigurationError) -> (settings: ClusterSettings, explicit: Set<String>) {
        var settings = ClusterSettings()
        var explicit: Set<String> = []
        if let file {
            let text = try readFile(file)
            let yaml: YAMLValue
            do throws(YAMLError) {
                yaml = try YAMLParser.parse(text, source: file)
            } catch {
                throw .yaml(error)
            }
            explicit.formUnion(try settings.apply(yaml: yaml, source: file))
        }
        explicit.formUnion(try settings.apply(environment: environment))
        try settings.loadSecret(environment: environment, relativeTo: file)
        return (settings, explicit)
    }

    /// Sets ``secret`` from `SPOKES_SECRET`, or else from ``secretFile``, and
    /// ``acceptedSecrets`` from ``acceptSecretFiles`` (relative paths are relative to the
    /// directory of `configurationFile`).
    public mutating func loadSecret(environment: [String: String], relativeTo configurationFile: String? = nil) throws(ConfigurationError) {
        func path(of name: String) -> String {
            let path = HomeDirectory.expand(name.trimmingWhitespace(), environment: environment)
            guard !path.hasPrefix("/"), let configurationFile else { return path }
            return URL(fileURLWithPath: configurationFile).deletingLastPathComponent().appendingPathComponent(path).path
        }
        do throws(SecurityError) {
            if let text = environment[Self.secretVariable], !text.isEmpty {
                secret = try ClusterSecret(text, source: Self.secretVariable)
            } else if !secretFile.isEmpty {
                secret = try ClusterSecret.read(file: path(of: secretFile))
            }
            acceptedSecrets = try acceptSecretFiles.split(separator: ",").map { name throws(SecurityError) in
                try ClusterSecret.read(file: path(of: String(name)))
            }
        } catch {
            throw .security(error)
        }
    }

    /// Overrides the settings present in `yaml`, a document shaped like `cluster.yaml`;
    /// `source` names the file in errors. Rejects unknown keys and, on error, leaves
    /// `self` unchanged.
    /// Returns the paths it set.
    @discardableResult
    public mutating func apply(yaml: YAMLValue, source: String) throws(ConfigurationError) -> Set<String> {
        let layer = SettingOrigin.file(source)
        var updated = self
        var assigned: [String: ConfigurationError.Origin] = [:]
        let entries: [YAMLValue.Entry]
        switch yaml {
        case .null: return []
        case .mapping(let topLevel, _): entries = topLevel
        default:
            throw .invalidValue(layer.origin("", yaml.location), setting: "the document",
                                problem: "must be a mapping of settings like 'cluster: spokes', got \(SettingReader.describe(yaml))")
        }
        for entry in entries {
            if let setting = Self.setting(entry.key) {
                try setting.assign(entry.value, to: &updated, origin: layer)
                assigned[entry.key] = layer.origin(entry.key, entry.value.location)
                continue
            }
            if entry.key == "secret" {
                throw .invalidValue(layer.origin(entry.key, entry.keyLocation), setting: "secret",
                                    problem: "cannot be written in cluster.yaml: put the secret in a file only you can read and name it with secret_file, or set SPOKES_SECRET")
            }
            if let new = Self.renamedSettings[entry.key] {
                throw .renamed(layer.origin(entry.key, entry.keyLocation), old: entry.key, new: new)
            }
            let sectionKeys = Self.keys(in: entry.key)
            let removedSection = Self.removedSettings.keys.contains { $0.hasPrefix(entry.key + ".") }
            guard !sectionKeys.isEmpty || removedSection else {
                throw Self.unknownKey(entry.key, at: entry.keyLocation, section: nil, known: Self.keys(in: nil), source: source)
            }
            let section: [YAMLValue.Entry]
            switch entry.value {
            case .null: section = []
            case .mapping(let nested, _): section = nested
            default:
                throw .invalidValue(layer.origin(entry.key, entry.value.location), setting: entry.key,
                                    problem: "must be a mapping with keys \(sectionKeys.joined(separator: ", ")), got \(SettingReader.describe(entry.value))")
            }
            for nested in section {
                let path = entry.key + "." + nested.key
                if let why = Self.removedSettings[path] {
                    throw .removed(layer.origin(path, nested.keyLocation), setting: path, why: why)
                }
                guard let setting = Self.setting(path) else {
                    throw Self.unknownKey(nested.key, at: nested.keyLocation, section: entry.key, known: sectionKeys, source: source)
                }
                try setting.assign(nested.value, to: &updated, origin: layer)
                assigned[path] = layer.origin(path, nested.value.location)
            }
        }
        try updated.checkRelations(assigned: assigned)
        self = updated
        return Set(assigned.keys)
    }

    /// Overrides the settings whose `SPOKES_*` variable is in `environment`. A list
    /// (`SPOKES_PEERS`) is comma-separated. Other variables are ignored, except a renamed
    /// one (`SPOKES_SEEDS`), which is refused naming its new name, and a `SPOKES_*` name
    /// within two edits of a setting's variable, which is taken for a misspelling and
    /// rejected. On error, leaves `self` unchanged. Returns the paths it set.
    @discardableResult
    public mutating func apply(environment: [String: String]) throws(ConfigurationError) -> Set<String> {
        let known = Self.table.map(\.environmentVariable)
        for name in environment.keys.sorted() where name.hasPrefix("SPOKES_") && !known.contains(name) && !Self.reservedVariables.contains(name) {
            if let (old, new) = Self.renamedSettings.first(where: { Self.environmentVariable(for: $0.key) == name }) {
                throw .renamed(.environment(variable: name), old: old, new: new)
            }
            if let (path, why) = Self.removedSettings.first(where: { Self.environmentVariable(for: $0.key) == name }) {
                throw .removed(.environment(variable: name), setting: path, why: why)
            }
            let nearest = known.map { (name: $0, distance: editDistance(name.uppercased(), $0)) }.min { $0.distance < $1.distance }
            if let nearest, nearest.distance <= 2 {
                throw .unknownVariable(name, suggestion: nearest.name)
            }
        }
        let location = Setting.noLocation
        var updated = self
        var assigned: [String: ConfigurationError.Origin] = [:]
        for setting in Self.table {
            guard let text = environment[setting.environmentVariable] else { continue }
            let value: YAMLValue = if setting.isList {
                .sequence(text.split(separator: ",").map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }.map { .scalar($0, location) }, location)
            } else {
                .scalar(text, location)
            }
            try setting.assign(value, to: &updated, origin: .environment)
            assigned[setting.path] = SettingOrigin.environment.origin(setting.path, location)
        }
        try updated.checkRelations(assigned: assigned)
        self = updated
        return Set(assigned.keys)
    }

    /// Sets settings from command-line flags: each entry's `values` (one, or several for
    /// a list) go to the setting at `path`, read exactly as the file and the environment
    /// are, with errors naming `flag` (e.g. `--slots`). Relations between settings are
    /// checked once all are set. On error, leaves `self` unchanged.
    public mutating func apply(flags: [(flag: String, path: String, values: [String])]) throws(ConfigurationError) {
        var updated = self
        var assigned: [String: ConfigurationError.Origin] = [:]
        for (flag, path, values) in flags {
            guard let setting = Self.setting(path) else { preconditionFailure("no setting \(path)") }
            let location = Setting.noLocation
            let value: YAMLValue = setting.isList ? .sequence(values.map { .scalar($0, location) }, location) : .scalar(values.last ?? "", location)
            try setting.assign(value, to: &updated, origin: .flag(flag))
            assigned[path] = .flag(flag)
        }
        try updated.checkRelations(assigned: assigned)
        self = updated
    }

    /// Sets one setting from a command-line flag; see ``apply(flags:)``.
    public mutating func apply(flag: String, values: [String], to path: String) throws(ConfigurationError) {
        try apply(flags: [(flag, path, values)])
    }

    /// Checks every setting's range and the relations between them, for settings
    /// changed in code (e.g. from command-line flags) after loading.
    public func validate() throws(ConfigurationError) {
        var copy = self
        for setting in Self.table {
            try setting.assign(setting.current(self), to: &copy, origin: .settings)
        }
        try checkRelations(assigned: [:])
    }

    // MARK: - Relations between settings

    /// Rejects combinations that no single value check catches. Blames the setting this
    /// layer set (`assigned`), so that the message points where the user can fix it.
    private func checkRelations(assigned: [String: ConfigurationError.Origin]) throws(ConfigurationError) {
        try requireLess("heartbeat.interval", heartbeatInterval, "heartbeat.suspect_after", suspectTimeout, assigned)
        try requireLess("heartbeat.suspect_after", suspectTimeout, "heartbeat.dead_after", deadTimeout, assigned)
        try requireCallsForEveryPlace(assigned)
        if discoveryMode == .lan, broadcastAddress.isEmpty {
            if let origin = assigned["discovery.broadcast"] {
                throw .invalidValue(origin, setting: "discovery.broadcast", problem: "must be the LAN's broadcast address when discovery.mode is lan, got nothing")
            }
            throw .invalidValue(assigned["discovery.mode"] ?? .settings, setting: "discovery.mode",
                                problem: "'lan' needs discovery.broadcast set to the LAN's broadcast address, e.g. 198.51.100.255")
        }
    }

    /// Every place a coordinator may fill on this node (both budgets and their queues)
    /// is a call running on one connection: `limits.max_calls_per_connection` must allow
    /// them all, or tasks within the budgets would be refused as too many calls.
    private func requireCallsForEveryPlace(_ assigned: [String: ConfigurationError.Origin]) throws(ConfigurationError) {
        let places = [slots, waitingSlots].reduce(0) { $0 + $1 + WorkerAdmission.queueLength(places: $1) }
        guard maximumCallsPerConnection < places else { return }
        let why = "node.slots (\(slots)) and node.waiting_slots (\(waitingSlots)) with their queues, \(places) places a coordinator may fill over one connection"
        if let origin = assigned["limits.max_calls_per_connection"] {
            throw .invalidValue(origin, setting: "limits.max_calls_per_connection", problem: "must be at least \(places): \(why), got '\(maximumCallsPerConnection)'")
        }
        let blamed = assigned["node.waiting_slots"] != nil || assigned["node.slots"] == nil ? "node.waiting_slots" : "node.slots"
        throw .invalidValue(assigned[blamed] ?? .settings, setting: blamed,
                            problem: "needs limits.max_calls_per_connection (\(maximumCallsPerConnection)) at least \(places): \(why); raise that limit too")
    }

    private func requireLess(_ lower: String, _ lowerValue: Double, _ upper: String, _ upperValue: Double,
                             _ assigned: [String: ConfigurationError.Origin]) throws(ConfigurationError) {
        guard lowerValue >= upperValue else { return }
        if let origin = assigned[upper] {
            throw .invalidValue(origin, setting: upper, problem: "must be greater than \(lower) (\(lowerValue)), got '\(upperValue)'")
        }
        throw .invalidValue(assigned[lower] ?? .settings, setting: lower, problem: "must be less than \(upper) (\(upperValue)), got '\(lowerValue)'")
    }

    // MARK: - Keys and files

    /// The keys known under `section`, or at the top level when nil.
    private static func keys(in section: String?) -> [String] {
        var keys: [String] = []
        for path in table.map(\.path) {
            let parts = path.split(separator: ".", maxSplits: 1).map(String.init)
            let key = section == nil ? parts[0] : (parts.count == 2 && parts[0] == section ? parts[1] : nil)
            if let key, !keys.contains(key) { keys.append(key) }
        }
        return keys
    }

    private static func unknownKey(_ key: String, at location: YAMLLocation, section: String?, known: [String], source: String) -> ConfigurationError {
        let nearest = known.map { (key: $0, distance: editDistance(key, $0)) }.min { $0.distance < $1.distance }
        let suggestion = nearest.flatMap { $0.distance <= max(2, key.count / 3) ? $0.key : nil }
            ?? known.first { key.count >= 3 && ($0.hasPrefix(key) || key.hasPrefix($0)) }
        return .unknownKey(source: source, location: location, key: key, section: section, suggestion: suggestion, knownKeys: known)
    }

    private static func readFile(_ path: String) throws(ConfigurationError) -> String {
        var isDirectory = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { throw .missingFile(path) }
        if isDirectory { throw .unreadableFile(path, reason: "it is a directory") }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .unreadableFile(path, reason: "permission denied or I/O error")
        }
        guard let text = String(data: data, encoding: .utf8) else { throw .unreadableFile(path, reason: "it is not UTF-8 text") }
        return text
    }
}

/// Edits (insertions, deletions, substitutions, adjacent transpositions) turning `a` into `b`.
private func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
    var previous2 = [Int](repeating: 0, count: b.count + 1)
    var previous = Array(0...b.count)
    for i in 1...a.count {
        var current = [i] + [Int](repeating: 0, count: b.count)
        for j in 1...b.count {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                current[j] = min(current[j], previous2[j - 2] + 1)
            }
        }
        previous2 = previous
        previous = current
    }
    return previous[b.count]
}
