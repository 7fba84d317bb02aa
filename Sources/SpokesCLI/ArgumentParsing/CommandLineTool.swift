import FoundationEssentials

/// One subcommand of a tool: its spec and what it does. `run` returns the exit status;
/// a ``UsageError`` it throws exits 2 with the usage, any other error exits 1.
public struct Subcommand: Sendable {
    public let spec: CommandSpec
    public let run: @Sendable (ParsedArguments, CommandContext) async throws -> Int32

    public init(spec: CommandSpec, run: @escaping @Sendable (ParsedArguments, CommandContext) async throws -> Int32) {
        self.spec = spec
        self.run = run
    }
}

/// A command-line tool with subcommands: dispatches, prints help and errors, and maps
/// outcomes to exit statuses (0 success, 1 runtime error, 2 usage error).
public struct CommandLineTool: Sendable {
    public let name: String
    public let abstract: String
    public let version: String
    public let subcommands: [Subcommand]

    public init(name: String, abstract: String, version: String, subcommands: [Subcommand]) {
        self.name = name
        self.abstract = abstract
        self.version = version
        self.subcommands = subcommands
    }

    /// Runs the tool with `arguments` (without the program name) and returns the exit status.
    public func run(_ arguments: [String], context: CommandContext) async -> Int32 {
        guard let first = arguments.first else {
            context.standardError(overview)
            return 2
        }
        switch first {
        case "-h", "--help":
            context.standardOutput(overview)
            return 0
        case "--version":
            context.standardOutput(version + "\n")
            return 0
        case "help":
            guard let topic = arguments.dropFirst().first else {
                context.standardOutput(overview)
                return 0
            }
            guard let subcommand = subcommand(named: topic, context: context) else { return 2 }
            context.standardOutput(ArgumentParser.helpText(for: subcommand.spec, toolName: name))
            return 0
        default:
            guard let subcommand = subcommand(named: first, context: context) else { return 2 }
            return await run(subcommand, Array(arguments.dropFirst()), context: context)
        }
    }

    private func run(_ subcommand: Subcommand, _ arguments: [String], context: CommandContext) async -> Int32 {
        do {
            switch try ArgumentParser.parse(arguments, as: subcommand.spec, toolName: name) {
            case .help(let text):
                context.standardOutput(text)
                return 0
            case .run(let parsed):
                return try await subcommand.run(parsed, context)
            }
        } catch let error as UsageError {
            let usage = subcommand.spec.usageLines(toolName: name)
            context.standardError("""
                error: \(error.message)

                USAGE: \(usage.joined(separator: "\n       "))
                See '\(name) \(subcommand.spec.name) --help'.

                """)
            return 2
        } catch {
            context.standardError("error: \(Self.describe(error))\n")
            return 1
        }
    }

    private func subcommand(named name: String, context: CommandContext) -> Subcommand? {
        if let found = subcommands.first(where: { $0.spec.name == name }) { return found }
        var message = "error: unknown subcommand '\(name)'."
        if let nearest = Suggestion.nearest(to: name, among: subcommands.map(\.spec.name)) {
            message += " Did you mean '\(nearest)'?"
        }
        context.standardError(message + "\nSee '\(self.name) --help'.\n")
        return nil
    }

    /// The tool's help: abstract, usage and the subcommands.
    var overview: String {
        """
        \(abstract)

        USAGE: \(name) <subcommand> [options]

        SUBCOMMANDS:
        \(ArgumentParser.table(subcommands.map { ($0.spec.name, $0.spec.abstract) }))
        See '\(name) help <subcommand>' for details.

        """
    }

    /// A person-readable description of an error.
    static func describe(_ error: any Error) -> String {
        if let error = error as? any LocalizedError, let text = error.errorDescription { return text }
        return String(describing: error)
    }
}
