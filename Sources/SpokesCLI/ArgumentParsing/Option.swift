/// Something a ``CommandSpec`` lists as an option: a typed ``Option`` or a plain ``OptionSpec``.
public protocol OptionDeclaration: Sendable {
    var spec: OptionSpec { get }
}

extension OptionSpec: OptionDeclaration {
    public var spec: OptionSpec { self }
}

/// A command-line option declared once and read through that declaration: its name, help,
/// range and default live here, and a command reads it with
/// `try arguments.value(Options.deadline)`, so no name is written twice.
///
/// The value type says what a command gets: `Option<Int>` has a default and always gives
/// a value; `Option<Double?>` gives nil when the option is not given; `Option<Bool>` is a
/// flag; `Option<[String]>` is repeatable. Every numeric option has a finite range that
/// `--help` states and that is enforced with a ``UsageError`` naming the flag (exit 2):
/// `1e21`, `inf`, `nan` and out-of-range values are refused.
public struct Option<Value: Sendable>: OptionDeclaration {
    public let spec: OptionSpec
    let read: @Sendable (ParsedArguments) throws(UsageError) -> Value

    /// The option's name with its dashes, as messages name it: `--users`.
    public var flagName: String { "--" + spec.name }

    init(spec: OptionSpec, read: @escaping @Sendable (ParsedArguments) throws(UsageError) -> Value) {
        self.spec = spec
        self.read = read
    }
}

// MARK: - Numbers

extension Option where Value == Int {
    /// A whole number within `range`, `default` when not given.
    public static func integer(_ name: String, _ valueName: String, in range: ClosedRange<Int>, default defaultValue: Int, help: String) -> Option<Int> {
        precondition(range.contains(defaultValue), "--\(name): the default is outside the range")
        return Option(spec: OptionSpec(name: name, valueName: valueName, help: help, defaultValue: "\(defaultValue)", range: describe(range))) { arguments throws(UsageError) in
            try arguments.explicitValue(name).map { text throws(UsageError) in try ParsedArguments.integer(text, flag: name, in: range) } ?? defaultValue
        }
    }
}

extension Option where Value == Int? {
    /// A whole number within `range`, nil when not given.
    public static func integer(_ name: String, _ valueName: String, in range: ClosedRange<Int>, help: String, defaultText: String? = nil) -> Option<Int?> {
        Option(spec: OptionSpec(name: name, valueName: valueName, help: help, defaultValue: defaultText, range: describe(range))) { arguments throws(UsageError) in
            try arguments.explicitValue(name).map { text throws(UsageError) in try ParsedArguments.integer(text, flag: name, in: range) }
        }
    }
}

extension Option where Value == Double {
    /// A finite decimal number within `range`, `default` when not given.
    public static func number(_ name: String, _ valueName: String, in range: ClosedRange<Double>, default defaultValue: Double, help: String) -> Option<Double> {
        precondition(range.contains(defaultValue), "--\(name): the default is outside the range")
        return Option(spec: OptionSpec(name: name, valueName: valueName, help: help, defaultValue: defaultValue.compactDescription, range: describe(range))) { arguments throws(UsageError) in
            try arguments.explicitValue(name).map { text throws(UsageError) in try ParsedArguments.number(text, flag: name, in: range) } ?? defaultValue
        }
    }
}

extension Option where Value == Double? {
    /// A finite decimal number within `range`, nil when not given.
    public static func number(_ name: String, _ valueName: String, in range: ClosedRange<Double>, help: String, defaultText: String? = nil) -> Option<Double?> {
        Option(spec: OptionSpec(name: name, valueName: valueName, help: help, defaultValue: defaultText, range: describe(range))) { arguments throws(UsageError) in
            try arguments.explicitValue(name).map { text throws(UsageError) in try ParsedArguments.number(text, flag: name, in: range) }
        }
    }
}

// MARK: - Text, flags, lists

extension Option where Value == String {
    /// Text, `default` when not given.
    public static func string(_ name: String, _ valueName: String, default defaultValue: String, help: String) -> Option<String> {
        Option(spec: OptionSpec(name: name, valueName: valueName, help: help, defaultValue: defaultValue)) { arguments in
            arguments.explicitValue(name) ?? defaultValue
        }
    }
}

extension Option where Value == String? {
    /// Text, nil when not given.
    public static func string(_ name: String, _ valueName: String, help: String, defaultText: String? = nil) -> Option<String?> {
        Option(spec: OptionSpec(name: name, valueName: valueName, help: help, defaultValue: defaultText)) { arguments in
            arguments.explicitValue(name)
        }
    }
}

extension Option where Value == String? {
    /// A list in the caller's syntax (`spokes sweep`'s `1-4,8`), nil when not given;
    /// `range` (`each 1 to 20000`) is what `--help` shows its items may be. The caller
    /// parses it and names this flag in its errors.
    public static func list(_ name: String, _ valueName: String, range: String?, help: String, defaultText: String? = nil) -> Option<String?> {
        Option(spec: OptionSpec(name: name, valueName: valueName, help: help, defaultValue: defaultText, range: range)) { arguments in
            arguments.explicitValue(name)
        }
    }
}

extension Option where Value == Bool {
    /// A flag: true when given.
    public static func flag(_ name: String, help: String) -> Option<Bool> {
        Option(spec: OptionSpec(name: name, valueName: nil, help: help, defaultValue: nil)) { arguments in
            arguments.flags.contains(name)
        }
    }
}

extension Option where Value == [String] {
    /// An option that may be given several times; every value, in order.
    public static func repeated(_ name: String, _ valueName: String, help: String, defaultText: String? = nil) -> Option<[String]> {
        Option(spec: OptionSpec(name: name, valueName: valueName, help: help, defaultValue: defaultText, isRepeatable: true)) { arguments in
            arguments.repeated[name] ?? []
        }
    }
}

extension Option {
    /// Text turned into a value by `parse`, which throws a ``UsageError`` naming the flag;
    /// nil when not given. `range` is what `--help` says the option accepts.
    public static func parsed<Parsed: Sendable>(
        _ name: String, _ valueName: String, help: String, range: String? = nil, defaultText: String? = nil,
        _ parse: @escaping @Sendable (String) throws(UsageError) -> Parsed
    ) -> Option<Parsed?> where Value == Parsed? {
        Option(spec: OptionSpec(name: name, valueName: valueName, help: help, defaultValue: defaultText, range: range)) { arguments throws(UsageError) in
            try arguments.explicitValue(name).map { text throws(UsageError) in try parse(text) }
        }
    }
}

/// `1 to 100`.
func describe(_ range: ClosedRange<Int>) -> String {
    "\(range.lowerBound) to \(range.upperBound)"
}

/// `0 to 1000`, `0.001 to 86400`.
func describe(_ range: ClosedRange<Double>) -> String {
    "\(range.lowerBound.compactDescription) to \(range.upperBound.compactDescription)"
}

// MARK: - Reading

extension ParsedArguments {
    /// The option's value: what was given, else its default (see ``Option``).
    public func value<Value>(_ option: Option<Value>) throws(UsageError) -> Value {
        try option.read(self)
    }

    /// True when the option was given on the command line (not just defaulted).
    public func isSet(_ option: some OptionDeclaration) -> Bool {
        isSet(option.spec.name)
    }

    /// The text given for `name`, without its default.
    func explicitValue(_ name: String) -> String? {
        values[name]
    }

    /// `text` as a plain decimal integer within `range`; errors name `--flag`.
    static func integer(_ text: String, flag name: String, in range: ClosedRange<Int>) throws(UsageError) -> Int {
        guard isPlainInteger(text), let value = Int(text) else {
            if isPlainInteger(text) { throw UsageError("--\(name) must be from \(describe(range)), got '\(text)'") }
            throw UsageError("--\(name) expects an integer (\(describe(range))), got '\(text)'")
        }
        guard range.contains(value) else { throw UsageError("--\(name) must be from \(describe(range)), got \(value)") }
        return value
    }

    /// `text` as a finite plain decimal number within `range`; errors name `--flag`.
    static func number(_ text: String, flag name: String, in range: ClosedRange<Double>) throws(UsageError) -> Double {
        guard isPlainDecimal(text), let value = Double(text), value.isFinite else {
            throw UsageError("--\(name) expects a number (\(describe(range))), got '\(text)'")
        }
        guard range.contains(value) else { throw UsageError("--\(name) must be from \(describe(range)), got \(text)") }
        return value
    }
}
