import Foundation

/// Layering settings: defaults, then a YAML file, then `SPOKES_*` environment
/// variables (the CLI applies its flags last). Each layer is checked as a whole when
/// applied, so an error always points at the file position or variable that caused it.
extension ClusterSettings {
    /// The YAML path of every setting, in `cluster.yaml` order. The environment
    /// variable of a path is ``environmentVariable(for:)``.
    public static let settingPaths = [
        "cluster",
        "node.name", "node.host", "node.port", "node.slots",
        "discovery.mode", "discovery.port", "discovery.interval", "discovery.broadcast",
        "seeds",
        "heartbeat.interval", "heartbeat.suspect_after", "heartbeat.dead_after",
        "tasks.deadline", "tasks.retries",
        "data_directory",
        "secret_file",
        "dashboard.port", "dashboard.host",
        "limits.max_frame_bytes", "limits.call_timeout", "limits.handshake_timeout",
        "limits.max_json_depth", "limits.max_array_length",
        "limits.max_connections", "limits.max_connections_per_address", "limits.max_calls_per_connection",
        "limits.max_send_queue_bytes",
        "limits.max_users", "limits.max_paths", "limits.max_stations",
    ]

    /// The variable holding the cluster secret itself (rather than a file's path).
    public static let secretVariable = "SPOKES_SECRET"

    /// Environment variables starting with `SPOKES_` that are not setting paths:
    /// never reported as misspellings.
    public static let reservedVariables: Set<String> = [secretVariable]

    /// `SPOKES_` + the path upper-cased with `.` as `_`: `node.port` is `SPOKES_NODE_PORT`.
    public static func environmentVariable(for path: String) -> String {
        "SPOKES_" + path.uppercased().replacingOccurrences(of: ".", with: "_")
    }

    /// Defaults, overridden by `file` (if given) and then by `SPOKES_*` variables in
    /// `environment`; then the secret, from `SPOKES_SECRET` or else `secret_file`.
    public static func load(file: String?, environment: [String: String]) throws(ConfigurationError) -> ClusterSettings {
        var settings = ClusterSettings()
        if let file {
            let text = try readFile(file)
            let yaml: YAMLValue
            do throws(YAMLError) {
                yaml = try YAMLParser.parse(text, source: file)
            } catch {
                throw .yaml(error)
            }
            try settings.apply(yaml: yaml, source: file)
        }
        try settings.apply(environment: environment)
        try settings.loadSecret(environment: environment, relativeTo: file)
        return settings
    }

    /// Sets ``secret`` from `SPOKES_SECRET`, or else from ``secretFile`` (relative to the
    /// directory of `configurationFile` when it is a relative path).
    public mutating func loadSecret(environment: [String: String], relativeTo configurationFile: String? = nil) throws(ConfigurationError) {
        do throws(SecurityError) {
            if let text = environment[Self.secretVariable], !text.isEmpty {
                secret = try ClusterSecret(text, source: Self.secretVariable)
            } else if !secretFile.isEmpty {
                var path = NSString(string: secretFile).expandingTildeInPath
                if !path.hasPrefix("/"), let configurationFile {
                    path = URL(fileURLWithPath: configurationFile).deletingLastPathComponent().appendingPathComponent(path).path
                }
                secret = try ClusterSecret.read(file: path)
            }
        } catch {
            throw .security(error)
        }
    }

    /// Overrides the settings present in `yaml`, a document shaped like `cluster.yaml`;
    /// `source` names the file in errors. Rejects unknown keys and, on error, leaves
    /// `self` unchanged.
    public mutating func apply(yaml: YAMLValue, source: String) throws(ConfigurationError) {
        let layer = Layer.file(source)
        var updated = self
        var assigned: [String: ConfigurationError.Origin] = [:]
        let entries: [YAMLValue.Entry]
        switch yaml {
        case .null: return
        case .mapping(let topLevel, _): entries = topLevel
        default:
            throw .invalidValue(layer.origin("", yaml.location), setting: "the document",
                                problem: "must be a mapping of settings like 'cluster: spokes', got \(Reader.describe(yaml))")
        }
        for entry in entries {
            if Self.settingPaths.contains(entry.key) {
                try updated.assign(entry.key, entry.value, layer)
                assigned[entry.key] = layer.origin(entry.key, entry.value.location)
                continue
            }
            if entry.key == "secret" {
                throw .invalidValue(layer.origin(entry.key, entry.keyLocation), setting: "secret",
                                    problem: "cannot be written in cluster.yaml: put the secret in a file only you can read and name it with secret_file, or set SPOKES_SECRET")
            }
            let sectionKeys = Self.keys(in: entry.key)
            guard !sectionKeys.isEmpty else {
                throw Self.unknownKey(entry.key, at: entry.keyLocation, section: nil, known: Self.keys(in: nil), source: source)
            }
            let section: [YAMLValue.Entry]
            switch entry.value {
            case .null: section = []
            case .mapping(let nested, _): section = nested
            default:
                throw .invalidValue(layer.origin(entry.key, entry.value.location), setting: entry.key,
                                    problem: "must be a mapping with keys \(sectionKeys.joined(separator: ", ")), got \(Reader.describe(entry.value))")
            }
            for nested in section {
                guard sectionKeys.contains(nested.key) else {
                    throw Self.unknownKey(nested.key, at: nested.keyLocation, section: entry.key, known: sectionKeys, source: source)
                }
                let path = entry.key + "." + nested.key
                try updated.assign(path, nested.value, layer)
                assigned[path] = layer.origin(path, nested.value.location)
            }
        }
        try updated.checkRelations(assigned: assigned)
        self = updated
    }

    /// Overrides the settings whose `SPOKES_*` variable is in `environment`.
    /// `SPOKES_SEEDS` is comma-separated. Other variables are ignored, except a
    /// `SPOKES_*` name within two edits of a setting's variable, which is taken for a
    /// misspelling and rejected. On error, leaves `self` unchanged.
    public mutating func apply(environment: [String: String]) throws(ConfigurationError) {
        let known = Self.settingPaths.map(Self.environmentVariable(for:))
        for name in environment.keys.sorted() where name.hasPrefix("SPOKES_") && !known.contains(name) && !Self.reservedVariables.contains(name) {
            let nearest = known.map { (name: $0, distance: editDistance(name.uppercased(), $0)) }.min { $0.distance < $1.distance }
            if let nearest, nearest.distance <= 2 {
                throw .unknownVariable(name, suggestion: nearest.name)
            }
        }
        let layer = Layer.environment
        let location = YAMLLocation(line: 1, column: 1)
        var updated = self
        var assigned: [String: ConfigurationError.Origin] = [:]
        for path in Self.settingPaths {
            guard let text = environment[Self.environmentVariable(for: path)] else { continue }
            let value: YAMLValue = if path == "seeds" {
                .sequence(text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.map { .scalar($0, location) }, location)
            } else {
                .scalar(text, location)
            }
            try updated.assign(path, value, layer)
            assigned[path] = layer.origin(path, location)
        }
        try updated.checkRelations(assigned: assigned)
        self = updated
    }

    /// Checks every setting's range and the relations between them, for settings
    /// changed in code (e.g. from command-line flags) after loading.
    public func validate() throws(ConfigurationError) {
        var copy = self
        for path in Self.settingPaths {
            try copy.assign(path, yamlValue(at: path), .settings)
        }
        try checkRelations(assigned: [:])
    }

    /// The setting at `path` as the YAML value that would set it.
    func yamlValue(at path: String) -> YAMLValue {
        let location = YAMLLocation(line: 1, column: 1)
        let text: String
        switch path {
        case "cluster": text = cluster
        case "node.name": text = nodeName
        case "node.host": text = host
        case "node.port": text = String(port)
        case "node.slots": text = String(slots)
        case "discovery.mode": text = discoveryMode.rawValue
        case "discovery.port": text = String(discoveryPort)
        case "discovery.interval": text = String(discoveryInterval)
        case "discovery.broadcast": text = broadcastAddress
        case "seeds": return .sequence(seeds.map { .scalar($0, location) }, location)
        case "heartbeat.interval": text = String(heartbeatInterval)
        case "heartbeat.suspect_after": text = String(suspectTimeout)
        case "heartbeat.dead_after": text = String(deadTimeout)
        case "tasks.deadline": text = String(taskDeadline)
        case "tasks.retries": text = String(taskRetries)
        case "data_directory": text = dataDirectory
        case "secret_file": text = secretFile
        case "dashboard.port": text = dashboardPort.map(String.init) ?? "off"
        case "dashboard.host": text = dashboardHost
        case "limits.max_frame_bytes": text = String(maximumFrameSize)
        case "limits.call_timeout": text = String(callTimeout)
        case "limits.handshake_timeout": text = String(handshakeTimeout)
        case "limits.max_json_depth": text = String(maximumJSONDepth)
        case "limits.max_array_length": text = String(maximumArrayLength)
        case "limits.max_connections": text = String(maximumConnections)
        case "limits.max_connections_per_address": text = String(maximumConnectionsPerAddress)
        case "limits.max_calls_per_connection": text = String(maximumCallsPerConnection)
        case "limits.max_send_queue_bytes": text = String(maximumSendQueueBytes)
        case "limits.max_users": text = String(maximumUsers)
        case "limits.max_paths": text = String(maximumPaths)
        case "limits.max_stations": text = String(maximumStations)
        default: return .null(location)
        }
        return .scalar(text, location)
    }

    // MARK: - Assigning one setting

    /// Where the layer being applied comes from; decides how errors name the place.
    private enum Layer {
        case file(String)
        case environment
        case settings

        func origin(_ path: String, _ location: YAMLLocation) -> ConfigurationError.Origin {
            switch self {
            case .file(let source): .file(source: source, location: location)
            case .environment: .environment(variable: ClusterSettings.environmentVariable(for: path))
            case .settings: .settings
            }
        }
    }

    private mutating func assign(_ path: String, _ value: YAMLValue, _ layer: Layer) throws(ConfigurationError) {
        let reader = Reader(path: path, value: value, layer: layer)
        switch path {
        case "cluster": cluster = try reader.name()
        case "node.name": nodeName = try reader.text()
        case "node.host": host = try reader.ipv4()
        case "node.port": port = try reader.port(from: 0)
        case "node.slots": slots = try reader.integer(in: 1...10_000)
        case "discovery.mode": discoveryMode = try reader.mode()
        case "discovery.port": discoveryPort = try reader.port(from: 1)
        case "discovery.interval": discoveryInterval = try reader.seconds()
        case "discovery.broadcast": broadcastAddress = try reader.ipv4(allowingEmpty: true)
        case "seeds": seeds = try reader.seeds()
        case "heartbeat.interval": heartbeatInterval = try reader.seconds()
        case "heartbeat.suspect_after": suspectTimeout = try reader.seconds()
        case "heartbeat.dead_after": deadTimeout = try reader.seconds()
        case "tasks.deadline": taskDeadline = try reader.seconds()
        case "tasks.retries": taskRetries = try reader.integer(in: 0...100)
        case "data_directory": dataDirectory = try reader.name(what: "a directory path")
        case "secret_file": secretFile = try reader.text()
        case "dashboard.port": dashboardPort = try reader.optionalPort()
        case "dashboard.host": dashboardHost = try reader.ipv4()
        case "limits.max_frame_bytes": maximumFrameSize = try reader.integer(in: 1024...1 << 30)
        case "limits.call_timeout": callTimeout = try reader.seconds()
        case "limits.handshake_timeout": handshakeTimeout = try reader.seconds()
        case "limits.max_json_depth": maximumJSONDepth = try reader.integer(in: 4...512)
        case "limits.max_array_length": maximumArrayLength = try reader.integer(in: 16...100_000_000)
        case "limits.max_connections": maximumConnections = try reader.integer(in: 1...1_000_000)
        case "limits.max_connections_per_address": maximumConnectionsPerAddress = try reader.integer(in: 1...1_000_000)
        case "limits.max_calls_per_connection": maximumCallsPerConnection = try reader.integer(in: 1...1_000_000)
        case "limits.max_send_queue_bytes": maximumSendQueueBytes = try reader.integer(in: 1024...1 << 40)
        case "limits.max_users": maximumUsers = try reader.integer(in: 1...100_000_000)
        case "limits.max_paths": maximumPaths = try reader.integer(in: 1...100_000_000)
        case "limits.max_stations": maximumStations = try reader.integer(in: 1...100_000_000)
        default: break
        }
    }

    /// Reads one setting's value, throwing errors that name the setting and where it was set.
    private struct Reader {
        let path: String
        let value: YAMLValue
        let layer: Layer

        func name(what: String = "a non-empty name") throws(ConfigurationError) -> String {
            let text = try text()
            if text.isEmpty { throw invalid("must be \(what), got \(Self.describe(value))") }
            return text
        }

        /// A scalar's text; an absent value is the empty string.
        func text() throws(ConfigurationError) -> String {
            switch value {
            case .scalar(let text, _): return text
            case .null: return ""
            default: throw invalid("must be a single value, got \(Self.describe(value))")
            }
        }

        func integer(in range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
            guard case .scalar(let text, _) = value, let number = Int(text), range.contains(number) else {
                throw invalid("must be an integer from \(range.lowerBound) to \(range.upperBound), got \(Self.describe(value))")
            }
            return number
        }

        func port(from lowest: Int) throws(ConfigurationError) -> UInt16 {
            UInt16(try integer(in: lowest...65_535))
        }

        /// A port from 0 to 65535, or `off` (nil).
        func optionalPort() throws(ConfigurationError) -> UInt16? {
            if case .scalar(let text, _) = value, text == "off" { return nil }
            guard case .scalar(let text, _) = value, let number = Int(text), (0...65_535).contains(number) else {
                throw invalid("must be off or a TCP port from 0 to 65535 (0 picks a free one), got \(Self.describe(value))")
            }
            return UInt16(number)
        }

        func seconds() throws(ConfigurationError) -> Double {
            guard case .scalar(let text, _) = value, let number = Double(text), number.isFinite, number > 0 else {
                throw invalid("must be a number of seconds greater than 0, got \(Self.describe(value))")
            }
            return number
        }

        func mode() throws(ConfigurationError) -> DiscoveryMode {
            let modes = DiscoveryMode.allCases.map(\.rawValue)
            guard case .scalar(let text, _) = value, let mode = DiscoveryMode(rawValue: text) else {
                throw invalid("must be one of \(modes.joined(separator: ", ")), got \(Self.describe(value))")
            }
            return mode
        }

        func ipv4(allowingEmpty: Bool = false) throws(ConfigurationError) -> String {
            let text = try text()
            if (allowingEmpty && text.isEmpty) || Self.isIPv4(text) { return text }
            throw invalid("must be an IPv4 address like 127.0.0.1\(allowingEmpty ? " or empty" : ""), got \(Self.describe(value))")
        }

        func seeds() throws(ConfigurationError) -> [String] {
            let items: [YAMLValue]
            switch value {
            case .null: return []
            case .sequence(let list, _): items = list
            default: throw invalid("must be a list of host:port, e.g. [198.51.100.20:7000], got \(Self.describe(value))")
            }
            var seeds: [String] = []
            for (index, item) in items.enumerated() {
                let item = Reader(path: "\(path)[\(index)]", value: item, layer: layer)
                guard case .scalar(let text, _) = item.value, Self.isSeed(text) else {
                    throw item.invalid("must be host:port with an IPv4 host and a port from 1 to 65535, e.g. 198.51.100.20:7000, got \(Self.describe(item.value))")
                }
                seeds.append(text)
            }
            return seeds
        }

        func invalid(_ problem: String) -> ConfigurationError {
            let settingPath = path.prefix { $0 != "[" }
            return .invalidValue(layer.origin(String(settingPath), value.location), setting: path, problem: problem)
        }

        /// How a rejected value is quoted in messages.
        static func describe(_ value: YAMLValue) -> String {
            switch value {
            case .scalar(let text, _): "'\(text)'"
            case .null: "nothing"
            case .sequence: "a list"
            case .mapping: "a mapping"
            }
        }

        static func isIPv4(_ text: String) -> Bool {
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            return parts.count == 4 && parts.allSatisfy { part in
                (1...3).contains(part.count) && part.allSatisfy(\.isASCII) && part.allSatisfy(\.isNumber) && Int(part)! <= 255
            }
        }

        static func isSeed(_ text: String) -> Bool {
            guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]) else { return false }
            return isIPv4(String(text[..<colon])) && (1...65_535).contains(port)
        }
    }

    // MARK: - Relations between settings

    /// Rejects combinations that no single value check catches. Blames the setting this
    /// layer set (`assigned`), so that the message points where the user can fix it.
    private func checkRelations(assigned: [String: ConfigurationError.Origin]) throws(ConfigurationError) {
        try requireLess("heartbeat.interval", heartbeatInterval, "heartbeat.suspect_after", suspectTimeout, assigned)
        try requireLess("heartbeat.suspect_after", suspectTimeout, "heartbeat.dead_after", deadTimeout, assigned)
        if discoveryMode == .lan, broadcastAddress.isEmpty {
            if let origin = assigned["discovery.broadcast"] {
                throw .invalidValue(origin, setting: "discovery.broadcast", problem: "must be the LAN's broadcast address when discovery.mode is lan, got nothing")
            }
            throw .invalidValue(assigned["discovery.mode"] ?? .settings, setting: "discovery.mode",
                                problem: "'lan' needs discovery.broadcast set to the LAN's broadcast address, e.g. 198.51.100.255")
        }
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
        for path in settingPaths {
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
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { throw .missingFile(path) }
        if isDirectory.boolValue { throw .unreadableFile(path, reason: "it is a directory") }
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
