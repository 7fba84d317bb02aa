import SpokesConcurrency

/// Parses one command's arguments against its ``CommandSpec`` and writes its help.
///
/// Accepted: `--name value`, `--name=value`, `--flag`, `-h`/`--help` anywhere, and `--`
/// to end options. A value that looks like a negative number (`--seed -5`) is a value.
/// Everything else that does not fit is a ``UsageError`` naming the flag.
public enum ArgumentParser {
    /// The result of parsing: run the command, or print its help.
    public enum Outcome: Sendable {
        case run(ParsedArguments)
        case help(String)
    }

    public static func parse(_ arguments: [String], as spec: CommandSpec, toolName: String) throws(UsageError) -> Outcome {
        var values: [String: String] = [:]
        var repeated: [String: [String]] = [:]
        var flags: Set<String> = []
        var index = 0
        let optionsEnd = arguments.firstIndex(of: "--") ?? arguments.count
        if arguments[..<optionsEnd].contains(where: { $0 == "-h" || $0 == "--help" }) {
            return .help(helpText(for: spec, toolName: toolName))
        }
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" {
                if index < arguments.count { throw UsageError("unexpected argument '\(arguments[index])'") }
                break
            }
            guard argument.hasPrefix("-"), argument.count > 1, !looksLikeNumber(argument) else {
                if let name = spec.positionals.first(where: { values[$0] == nil }) {
                    values[name] = argument
                    continue
                }
                throw UsageError("unexpected argument '\(argument)'")
            }
            guard argument.hasPrefix("--") else {
                throw UsageError("unknown option '\(argument)'\(suggestion(for: String(argument.dropFirst()), in: spec))")
            }
            let body = argument.dropFirst(2)
            let name = String(body.prefix { $0 != "=" })
            let inlineValue = body.contains("=") ? String(body.drop { $0 != "=" }.dropFirst()) : nil
            guard let option = spec.option(named: name) else {
                if let message = spec.retiredOptions[name] { throw UsageError("--\(name): \(message)") }
                throw UsageError("unknown option '--\(name)'\(suggestion(for: name, in: spec))")
            }
            if option.isFlag {
                if inlineValue != nil { throw UsageError("--\(name) is a flag and takes no value") }
                flags.insert(name)
                continue
            }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else if index < arguments.count, !isOption(arguments[index]) {
                value = arguments[index]
                index += 1
            } else {
                throw UsageError("--\(name) needs a value: --\(name) <\(option.valueName ?? "VALUE")>")
            }
            if option.isRepeatable {
                repeated[name, default: []].append(value)
                continue
            }
            if values[name] != nil { throw UsageError("--\(name) was given twice") }
            values[name] = value
        }
        return .run(ParsedArguments(command: spec.name, spec: spec, values: values, repeated: repeated, flags: flags))
    }

    /// The command's help: abstract, usage, discussion and an aligned option table.
    public static func helpText(for spec: CommandSpec, toolName: String) -> String {
        var text = spec.abstract + "\n\n"
        let usage = spec.usageLines(toolName: toolName)
        text += "USAGE: " + usage.joined(separator: "\n       ") + "\n"
        if let discussion = spec.discussion {
            text += "\n" + wrap(discussion, width: 80, indent: "") + "\n"
        }
        let rows = spec.options.map { option -> (String, String) in
            var help = option.help
            let notes = [option.range, option.defaultValue.map { "default: \($0)" }].compactMap { $0 }
            if !notes.isEmpty { help += " (\(notes.joined(separator: "; ")))" }
            return (option.synopsis, help)
        } + [("-h, --help", "Show help information.")]
        text += "\nOPTIONS:\n" + table(rows)
        return text
    }

    /// Two aligned columns: `  left   right`, the right column wrapped under itself.
    static func table(_ rows: [(String, String)]) -> String {
        let width = min((rows.map(\.0.count).max() ?? 0) + 4, 30)
        return rows.map { left, right in
            let indent = String(repeating: " ", count: width)
            let wrapped = wrap(right, width: 80, indent: indent)
            let label = "  " + left
            if label.count + 2 > width {
                return label + "\n" + indent + wrapped.dropFirst(indent.count) + "\n"
            }
            return label.padded(to: width) + wrapped.dropFirst(indent.count) + "\n"
        }.joined()
    }

    /// Wraps `text` into lines of at most `width` columns, each starting with `indent`.
    static func wrap(_ text: String, width: Int, indent: String) -> String {
        var lines: [String] = []
        var line = indent
        for word in text.split(separator: " ", omittingEmptySubsequences: true) {
            if line.count > indent.count, line.count + 1 + word.count > width {
                lines.append(line)
                line = indent
            }
            line += (line.count > indent.count ? " " : "") + word
        }
        lines.append(line)
        return lines.joined(separator: "\n")
    }

    private static func isOption(_ argument: String) -> Bool {
        argument.hasPrefix("-") && argument.count > 1 && !looksLikeNumber(argument)
    }

    private static func looksLikeNumber(_ argument: String) -> Bool {
        argument.hasPrefix("-") && argument.dropFirst().first.map { $0.isNumber || $0 == "." } == true
    }

    private static func suggestion(for name: String, in spec: CommandSpec) -> String {
        guard let nearest = Suggestion.nearest(to: name, among: spec.options.map(\.name)) else { return "" }
        return ". Did you mean '--\(nearest)'?"
    }
}
