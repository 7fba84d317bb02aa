/// One setting of ``ClusterSettings``: its YAML key path, what it means (the comment
/// `cluster.yaml` shows), the values it accepts, and how it is read and written.
///
/// ``ClusterSettings/table`` lists every setting once; from it come the keys the YAML
/// loader knows, the `SPOKES_*` environment variables, the defaults and ranges that
/// `--help` shows, and the check of `cluster.yaml`'s comments and defaults. A value
/// outside the setting's range is refused with an error that names where it was set: the
/// file and line, the variable, or the flag.
public struct Setting: Sendable {
    /// The YAML path: `node.slots` is `slots:` under `node:`.
    public let path: String
    /// What the setting means, as `cluster.yaml`'s comment says it (without the range).
    public let doc: String
    /// The values accepted, in words (`1 to 10000`); nil when the doc says it all.
    public let range: String?
    /// Whether the value is a list (`[a, b]` in YAML, comma-separated in the environment).
    public let isList: Bool
    let read: @Sendable (inout ClusterSettings, SettingReader) throws(ConfigurationError) -> Void
    let current: @Sendable (ClusterSettings) -> YAMLValue

    /// `SPOKES_` + the path upper-cased with `.` as `_`: `node.port` is `SPOKES_NODE_PORT`.
    public var environmentVariable: String { ClusterSettings.environmentVariable(for: path) }

    /// The comment `cluster.yaml` shows after the setting: the doc, then the range in
    /// parentheses when there is one.
    public var comment: String { doc + (range.map { " (\($0))" } ?? "") }

    /// The value of this setting in `settings`, as YAML text (`4`, `off`, `[a:1, b:2]`).
    public func text(in settings: ClusterSettings) -> String {
        switch current(settings) {
        case .scalar(let text, _): return Self.yamlScalar(text)
        case .sequence(let items, _):
            return "[" + items.map { if case .scalar(let text, _) = $0 { Self.yamlScalar(text) } else { "" } }.joined(separator: ", ") + "]"
        case .null, .mapping: return ""
        }
    }

    /// The built-in default, as YAML text.
    public var defaultText: String { text(in: ClusterSettings()) }

    /// The key under its section: `slots` for `node.slots`, `cluster` for `cluster`.
    public var key: String { String(path.split(separator: ".").last ?? "") }

    /// The section a nested setting sits in (`node` for `node.slots`); nil at the top level.
    public var section: String? { path.contains(Character(".")) ? String(path.split(separator: ".")[0]) : nil }

    /// Reads `value` into `settings`; errors name where `origin` says the value was set.
    func assign(_ value: YAMLValue, to settings: inout ClusterSettings, origin: SettingOrigin) throws(ConfigurationError) {
        try read(&settings, SettingReader(path: path, value: value, origin: origin))
    }

    /// A plain scalar as YAML writes it: quoted when empty (`""`).
    private static func yamlScalar(_ text: String) -> String {
        text.isEmpty ? "\"\"" : text
    }
}

/// Where a value being read was set; decides how an error names the place.
enum SettingOrigin: Sendable {
    case file(String)
    case environment
    case flag(String)
    case settings

    func origin(_ path: String, _ location: YAMLLocation) -> ConfigurationError.Origin {
        switch self {
        case .file(let source): .file(source: source, location: location)
        case .environment: .environment(variable: ClusterSettings.environmentVariable(for: path))
        case .flag(let flag): .flag(flag)
        case .settings: .settings
        }
    }
}

// MARK: - Kinds of setting

extension Setting {
    /// A non-empty name.
    static func name(_ path: String, _ key: WritableKeyPath<ClusterSettings, String> & Sendable, doc: String) -> Setting {
        Setting(path: path, doc: doc, range: nil, isList: false,
                read: { settings, reader throws(ConfigurationError) in settings[keyPath: key] = try reader.name() },
                current: { .scalar($0[keyPath: key], Self.noLocation) })
    }

    /// Any text, empty included.
    static func text(_ path: String, _ key: WritableKeyPath<ClusterSettings, String> & Sendable, doc: String) -> Setting {
        Setting(path: path, doc: doc, range: nil, isList: false,
                read: { settings, reader throws(ConfigurationError) in settings[keyPath: key] = try reader.text() },
                current: { .scalar($0[keyPath: key], Self.noLocation) })
    }

    /// A non-empty path of a directory (`~` is the home directory, see ``HomeDirectory``).
    static func directory(_ path: String, _ key: WritableKeyPath<ClusterSettings, String> & Sendable, doc: String) -> Setting {
        Setting(path: path, doc: doc, range: nil, isList: false,
                read: { settings, reader throws(ConfigurationError) in settings[keyPath: key] = try reader.name(what: "a directory path") },
                current: { .scalar($0[keyPath: key], Self.noLocation) })
    }

    /// A dotted IPv4 address (or, if `allowingEmpty`, nothing).
    static func ipv4(_ path: String, _ key: WritableKeyPath<ClusterSettings, String> & Sendable, allowingEmpty: Bool = false, doc: String) -> Setting {
        Setting(path: path, doc: doc, range: nil, isList: false,
                read: { settings, reader throws(ConfigurationError) in settings[keyPath: key] = try reader.ipv4(allowingEmpty: allowingEmpty) },
                current: { .scalar($0[keyPath: key], Self.noLocation) })
    }

    /// A whole number within `range`.
    /// A whole-number setting a workload module declares for itself (the cluster knows
    /// nothing of it): kept in ``ClusterSettings/workloadIntegers``, read with
    /// ``integer(in:)``. Declare it with ``ClusterSettings/declare(_:)`` so files,
    /// variables and flags know it.
    public static func workloadInteger(_ path: String, default value: Int, in range: ClosedRange<Int>, doc: String) -> Setting {
        Setting(path: path, doc: doc, range: Self.describe(range), isList: false,
                read: { settings, reader throws(ConfigurationError) in
                    // Absent means the default, so settings that agree compare equal.
                    let given = try reader.integer(in: range)
                    settings.workloadIntegers[path] = given == value ? nil : given
                },
                current: { .scalar(String($0.workloadIntegers[path] ?? value), Self.noLocation) })
    }

    /// The value of a whole-number setting in `settings` (its default when it was not set).
    public func integer(in settings: ClusterSettings) -> Int {
        Int(text(in: settings)) ?? 0
    }

    static func integer(_ path: String, _ key: WritableKeyPath<ClusterSettings, Int> & Sendable, in range: ClosedRange<Int>, doc: String) -> Setting {
        Setting(path: path, doc: doc, range: Self.describe(range), isList: false,
                read: { settings, reader throws(ConfigurationError) in settings[keyPath: key] = try reader.integer(in: range) },
                current: { .scalar(String($0[keyPath: key]), Self.noLocation) })
    }

    /// `cores` (one per core this process may run on) or a whole number within `range`.
    static func slotCount(_ path: String, _ key: WritableKeyPath<ClusterSettings, ClusterSettings.SlotCount> & Sendable, in range: ClosedRange<Int>, doc: String) -> Setting {
        Setting(path: path, doc: doc, range: "cores, or " + Self.describe(range), isList: false,
                read: { settings, reader throws(ConfigurationError) in settings[keyPath: key] = try reader.slotCount(in: range) },
                current: { settings in
                    switch settings[keyPath: key] {
                    case .cores: .scalar("cores", Self.noLocation)
                    case .fixed(let count): .scalar(String(count), Self.noLocation)
                    }
                })
    }

    /// A TCP or UDP port from `lowest` to 65535.
    static func port(_ path: String, _ key: WritableKeyPath<ClusterSettings, UInt16> & Sendable, from lowest: Int, doc: String) -> Setting {
        Setting(path: path, doc: doc, range: Self.describe(lowest...65_535), isList: false,
                read: { settings, reader throws(ConfigurationError) in settings[keyPath: key] = UInt16(try reader.integer(in: lowest...65_535)) },
                current: { .scalar(String($0[keyPath: key]), Self.noLocation) })
    }

    /// A port from 0 to 65535, or `off` (nil).
    static func optionalPort(_ path: String, _ key: WritableKeyPath<ClusterSettings, UInt16?> & Sendable, doc: String) -> Setting {
        Setting(path: path, doc: doc, range: "off, or 0 to 65535", isList: false,
                read: { settings, reader throws(ConfigurationError) in settings[keyPath: key] = try reader.optionalPort() },
                current: { .scalar($0[keyPath: key].map(String.init) ?? "off", Self.noLocation) })
    }

    /// Seconds within `range`: finite, and never more than a `Duration` holds.
    static func seconds(_ path: String, _ key: WritableKeyPath<ClusterSettings, Double> & Sendable, in range: ClosedRange<Double>, doc: String) -> Setting {
        precondition(range.lowerBound > 0 && range.upperBound <= Self.longestDuration, "\(path): a duration's range must be positive and finite")
        return Setting(path: path, doc: doc, range: "\(Self.describe(range.lowerBound)) to \(Self.describe(range.upperBound)) s", isList: false,
                       read: { settings, reader throws(ConfigurationError) in settings[keyPath: key] = try reader.seconds(in: range) },
                       current: { .scalar(Self.describe($0[keyPath: key]), Self.noLocation) })
    }

    /// One of a fixed set of words.
    static func choice<Value: RawRepresentable & CaseIterable & Sendable>(
        _ path: String, _ key: WritableKeyPath<ClusterSettings, Value> & Sendable, doc: String
    ) -> Setting where Value.RawValue == String {
        let words = Value.allCases.map(\.rawValue)
        return Setting(path: path, doc: doc, range: words.joined(separator: " | "), isList: false,
                       read: { settings, reader throws(ConfigurationError) in settings[keyPath: key] = try reader.choice(Value.self) },
                       current: { .scalar($0[keyPath: key].rawValue, Self.noLocation) })
    }

    /// A list of `host:port` addresses (IPv4 host, port 1 to 65535).
    static func addresses(_ path: String, _ key: WritableKeyPath<ClusterSettings, [String]> & Sendable, doc: String) -> Setting {
        Setting(path: path, doc: doc, range: nil, isList: true,
                read: { settings, reader throws(ConfigurationError) in settings[keyPath: key] = try reader.addresses() },
                current: { .sequence($0[keyPath: key].map { .scalar($0, Self.noLocation) }, Self.noLocation) })
    }

    /// The longest duration any setting may hold, in seconds: far below the 1.7e20 s at
    /// which `Duration.seconds(_:)` traps.
    public static let longestDuration = 1e6

    static let noLocation = YAMLLocation(line: 1, column: 1)

    /// `1 to 10000`.
    static func describe(_ range: ClosedRange<Int>) -> String {
        "\(range.lowerBound) to \(range.upperBound)"
    }

    /// `0.001`, `30`, `1000000`: a number as a person writes it.
    static func describe(_ value: Double) -> String {
        value.rounded() == value && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}

// MARK: - Reading one value

/// Reads one setting's value, throwing errors that name the setting and where it was set.
struct SettingReader {
    let path: String
    let value: YAMLValue
    let origin: SettingOrigin

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

    /// `cores`, or a whole number within `range`.
    func slotCount(in range: ClosedRange<Int>) throws(ConfigurationError) -> ClusterSettings.SlotCount {
        if case .scalar(let text, _) = value, text == "cores" { return .cores }
        guard case .scalar(let text, _) = value, let number = Int(text), range.contains(number) else {
            throw invalid("must be cores (one per core) or an integer from \(range.lowerBound) to \(range.upperBound), got \(Self.describe(value))")
        }
        return .fixed(number)
    }

    /// A port from 0 to 65535, or `off` (nil).
    func optionalPort() throws(ConfigurationError) -> UInt16? {
        if case .scalar(let text, _) = value, text == "off" { return nil }
        guard case .scalar(let text, _) = value, let number = Int(text), (0...65_535).contains(number) else {
            throw invalid("must be off or a TCP port from 0 to 65535 (0 picks a free one), got \(Self.describe(value))")
        }
        return UInt16(number)
    }

    /// A plain decimal number of seconds within `range` (no `inf`, `nan` or hex).
    func seconds(in range: ClosedRange<Double>) throws(ConfigurationError) -> Double {
        guard case .scalar(let text, _) = value, Self.isPlainDecimal(text), let number = Double(text), range.contains(number) else {
            throw invalid("must be a number of seconds from \(Setting.describe(range.lowerBound)) to \(Setting.describe(range.upperBound)), got \(Self.describe(value))")
        }
        return number
    }

    func choice<Value: RawRepresentable & CaseIterable>(_ type: Value.Type) throws(ConfigurationError) -> Value where Value.RawValue == String {
        guard case .scalar(let text, _) = value, let choice = Value(rawValue: text) else {
            throw invalid("must be one of \(Value.allCases.map(\.rawValue).joined(separator: ", ")), got \(Self.describe(value))")
        }
        return choice
    }

    func ipv4(allowingEmpty: Bool = false) throws(ConfigurationError) -> String {
        let text = try text()
        if (allowingEmpty && text.isEmpty) || Self.isIPv4(text) { return text }
        throw invalid("must be an IPv4 address like 127.0.0.1\(allowingEmpty ? " or empty" : ""), got \(Self.describe(value))")
    }

    func addresses() throws(ConfigurationError) -> [String] {
        let items: [YAMLValue]
        switch value {
        case .null: return []
        case .sequence(let list, _): items = list
        default: throw invalid("must be a list of host:port, e.g. [198.51.100.20:7000], got \(Self.describe(value))")
        }
        var addresses: [String] = []
        for (index, item) in items.enumerated() {
            let item = SettingReader(path: "\(path)[\(index)]", value: item, origin: origin)
            guard case .scalar(let text, _) = item.value, Self.isAddress(text) else {
                throw item.invalid("must be host:port with an IPv4 host and a port from 1 to 65535, e.g. 198.51.100.20:7000, got \(Self.describe(item.value))")
            }
            addresses.append(text)
        }
        return addresses
    }

    func invalid(_ problem: String) -> ConfigurationError {
        let settingPath = path.prefix { $0 != "[" }
        return .invalidValue(origin.origin(String(settingPath), value.location), setting: path, problem: problem)
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

    /// `12`, `-0.5`, `.5`, `1e-3`: what a person types as a number; not `inf`, `nan` or hex.
    static func isPlainDecimal(_ text: String) -> Bool {
        !text.isEmpty && text.allSatisfy { $0.isASCII && ($0.isNumber || "+-.eE".contains($0)) } && text.contains { $0.isNumber }
    }

    static func isIPv4(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in
            (1...3).contains(part.count) && part.allSatisfy(\.isASCII) && part.allSatisfy(\.isNumber) && Int(part)! <= 255
        }
    }

    static func isAddress(_ text: String) -> Bool {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]) else { return false }
        return isIPv4(String(text[..<colon])) && (1...65_535).contains(port)
    }
}
