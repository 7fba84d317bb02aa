/// One option of a command, as help shows it: `--name VALUE` (also `--name=VALUE`) or a
/// boolean `--name` flag. Declare options as typed ``Option`` values, which carry their
/// spec and read their value; the string-named factories and readers below remain for
/// commands not yet moved to them.
public struct OptionSpec: Sendable, Hashable {
    /// The name without dashes: `users` for `--users`.
    public let name: String
    /// What the value is called in help (`U` in `--users <U>`); nil for a flag.
    public let valueName: String?
    public let help: String
    /// The value used when the option is not given, shown in help as "(default: ...)".
    public let defaultValue: String?
    /// Whether the option may be given more than once (`--peer a --peer b`).
    public let isRepeatable: Bool
    /// The values accepted, in words (`1 to 100`), shown in help; nil when the help says it all.
    public let range: String?

    public init(name: String, valueName: String?, help: String, defaultValue: String?, isRepeatable: Bool = false, range: String? = nil) {
        self.name = name
        self.valueName = valueName
        self.help = help
        self.defaultValue = defaultValue
        self.isRepeatable = isRepeatable
        self.range = range
    }

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
