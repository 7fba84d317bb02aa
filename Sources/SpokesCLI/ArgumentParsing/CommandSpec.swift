/// What a command is: its name, a one-line abstract, an optional longer discussion,
/// usage lines, and its options. Help text is generated from it.
public struct CommandSpec: Sendable {
    public let name: String
    public let abstract: String
    public let discussion: String?
    /// Hand-written synopsis lines, without the tool name (e.g. `simulate --network FILE ...`).
    /// When empty, one is generated from the options.
    public let usage: [String]
    public let options: [OptionSpec]
    /// The value options positional arguments fill, in order (`result JOB` means
    /// `--job JOB`; `keyring use ID` means `--action use --key ID`); empty: positional
    /// arguments are refused.
    public private(set) var positionals: [String]
    /// The first of ``positionals``.
    public var positional: String? { positionals.first }
    /// Options this command no longer has, by name, with what to say instead
    /// (`seed` on `node`: use --peer HOST:PORT).
    public private(set) var retiredOptions: [String: String] = [:]

    /// A command whose options are typed ``Option`` declarations (or specs).
    public init(
        name: String, abstract: String, discussion: String? = nil, usage: [String] = [], options: [any OptionDeclaration],
        positional: (any OptionDeclaration)? = nil
    ) {
        self.init(name: name, abstract: abstract, discussion: discussion, usage: usage, options: options.map(\.spec), positional: positional?.spec.name)
    }

    /// A command whose positional arguments fill `positionals`, in order.
    public init(
        name: String, abstract: String, discussion: String? = nil, usage: [String] = [], options: [any OptionDeclaration],
        positionals: [any OptionDeclaration]
    ) {
        self.init(name: name, abstract: abstract, discussion: discussion, usage: usage, options: options.map(\.spec), positional: nil)
        self.positionals = positionals.map(\.spec.name)
    }

    /// A command whose options are string-named specs.
    public init(
        name: String, abstract: String, discussion: String? = nil, usage: [String] = [], options: [OptionSpec],
        positional: String? = nil
    ) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.usage = usage
        self.options = options
        positionals = positional.map { [$0] } ?? []
    }

    /// The same command, refusing `--name` with `message` (e.g. what it is called now).
    public func retiring(_ name: String, _ message: String) -> CommandSpec {
        var copy = self
        copy.retiredOptions[name] = message
        return copy
    }

    func option(named name: String) -> OptionSpec? {
        options.first { $0.name == name }
    }

    /// The usage lines, each starting with the tool name.
    func usageLines(toolName: String) -> [String] {
        if !usage.isEmpty { return usage.map { "\(toolName) \($0)" } }
        let generated = options.map { "[\($0.synopsis)]" }.joined(separator: " ")
        return ["\(toolName) \(name)\(generated.isEmpty ? "" : " " + generated)"]
    }
}
