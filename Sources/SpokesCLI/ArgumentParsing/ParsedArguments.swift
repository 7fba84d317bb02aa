/// A parsed command line, with typed accessors that validate values and name the flag
/// in their errors.
public struct ParsedArguments: Sendable {
    public let command: String
    let spec: CommandSpec
    let values: [String: String]
    let repeated: [String: [String]]
    let flags: Set<String>

    /// Every value of a repeatable option, in the order given.
    public func strings(_ name: String) -> [String] {
        repeated[name] ?? []
    }

    /// True when the flag was given, or the value option was given explicitly (not just defaulted).
    public func isSet(_ name: String) -> Bool {
        flags.contains(name) || values[name] != nil || repeated[name] != nil
    }

    /// Whether the flag `--name` was given.
    public func flag(_ name: String) -> Bool {
        flags.contains(name)
    }

    /// The explicit value, else the spec's default, else nil.
    public func string(_ name: String) throws(UsageError) -> String? {
        values[name] ?? spec.option(named: name)?.defaultValue
    }

    /// The value as a plain decimal integer, checked against `range`.
    public func integer(_ name: String, in range: ClosedRange<Int>? = nil) throws(UsageError) -> Int? {
        guard let text = try string(name) else { return nil }
        guard Self.isPlainInteger(text), let value = Int(text) else {
            if Self.isPlainInteger(text) {
                throw UsageError("--\(name) is out of range, got '\(text)'\(range.map { "; expected \(Self.describe($0))" } ?? "")")
            }
            throw UsageError("--\(name) expects an integer, got '\(text)'")
        }
        if let range, !range.contains(value) {
            throw UsageError("--\(name) must be \(Self.describe(range)), got \(value)")
        }
        return value
    }

    /// The value as a finite decimal number, checked against `range`.
    public func double(_ name: String, in range: ClosedRange<Double>? = nil) throws(UsageError) -> Double? {
        guard let text = try string(name) else { return nil }
        guard Self.isPlainDecimal(text), let value = Double(text), value.isFinite else {
            throw UsageError("--\(name) expects a number, got '\(text)'")
        }
        if let range, !range.contains(value) {
            throw UsageError("--\(name) must be between \(range.lowerBound.compactDescription) and \(range.upperBound.compactDescription), got \(text)")
        }
        return value
    }

    /// Digits with an optional leading minus: no spaces, signs, exponents or hex.
    static func isPlainInteger(_ text: String) -> Bool {
        let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        return !digits.isEmpty && digits.allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// `12`, `-0.5`, `.5`, `3.`, `1e-3`: what a person types as a number; not `nan`, `inf` or hex.
    static func isPlainDecimal(_ text: String) -> Bool {
        !text.isEmpty && text.allSatisfy { $0.isASCII && ($0.isNumber || "+-.eE".contains($0)) } && text.contains { $0.isNumber }
    }

    private static func describe(_ range: ClosedRange<Int>) -> String {
        switch (range.lowerBound, range.upperBound) {
        case (let low, Int.max): "at least \(low)"
        case (Int.min, let high): "at most \(high)"
        case (let low, let high): "between \(low) and \(high)"
        }
    }
}

extension Double {
    /// "0.1", "1000": a number as a person writes it, without a trailing ".0".
    var compactDescription: String {
        rounded() == self && abs(self) < 1e15 ? String(Int(self)) : String(self)
    }
}
