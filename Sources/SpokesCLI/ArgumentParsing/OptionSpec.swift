/// One option of a command: `--name VALUE` (also `--name=VALUE`) or a boolean `--name` flag.
public struct OptionSpec: Sendable, Hashable {
    /// The name without dashes: `users` for `--users`.
    public let name: String
    /// What the value is called in help (`U` in `--users <U>`); nil for a flag.
    public let valueName: String?
    public let help: String
    /// The value used when the option is not given, shown in help as "(default: ...)".
    public let defaultValue: String?
    /// Whether the option may be given more than once (`--seed a --seed b`).
    public let isRepeatable: Bool

    /// An option that takes a value.
    public static func value(_ name: String, _ valueName: String, help: String, default defaultValue: String? = nil) -> OptionSpec {
        OptionSpec(name: name, valueName: valueName, help: help, defaultValue: defaultValue, isRepeatable: false)
    }

    /// An option that takes a value and may be given several times.
    public static func repeated(_ name: String, _ valueName: String, help: String) -> OptionSpec {
        OptionSpec(name: name, valueName: valueName, help: help, defaultValue: nil, isRepeatable: true)
    }

    /// A boolean flag: present or not.
    public static func flag(_ name: String, help: String) -> OptionSpec {
        OptionSpec(name: name, valueName: nil, help: help, defaultValue: nil, isRepeatable: false)
    }

    public var isFlag: Bool { valueName == nil }

    /// `--users <U>` or `--json`, as help and usage lines show it.
    var synopsis: String {
        (valueName.map { "--\(name) <\($0)>" } ?? "--\(name)") + (isRepeatable ? " ..." : "")
    }
}
