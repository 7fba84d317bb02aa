import Testing
@testable import SpokesCLI

/// Every flag of every command, checked together: numeric flags state a finite range in
/// `--help` and refuse what is outside it (exit 2, naming the flag) before any work.
@Suite struct CommandFlagsTests {
    /// Options whose values are not numbers (so need no numeric range).
    static let textOptions: Set<String> = [
        "network", "goal", "to", "config", "cluster", "html", "name", "host", "broadcast", "peer", "dashboard-host",
        "data-directory", "job", "only", "kind", "inputs", "action", "key", "directory", "advertise", "owner", "nodes-binary",
    ]

    /// What a command needs besides the flag under test to get as far as reading it.
    static func baseArguments(_ command: String) -> [String] {
        switch command {
        case "result", "cancel": [command, "job-00000000"]
        case "stop": [command, "--to", "127.0.0.1:9"]
        case "run": [command, "bench.noop"]
        case "sweep": [command, "--seeds", "1", "--to", "127.0.0.1:9"]
        default: [command]
        }
    }

    /// The commands and their options that take a value.
    static var valueOptions: [(command: String, option: OptionSpec)] {
        SpokesTool.tool.subcommands.flatMap { subcommand in
            subcommand.spec.options.filter { !$0.isFlag }.map { (subcommand.spec.name, $0) }
        }
    }

    /// Help text with its wrapping undone: every run of whitespace is one space.
    static func flattened(_ text: String) -> String {
        text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    @Test func everyValueOptionStatesItsRangeOrTakesText() {
        for (command, option) in Self.valueOptions where !Self.textOptions.contains(option.name) {
            #expect(option.range != nil, "\(command) --\(option.name) states no range in --help")
            let help = Self.flattened(ArgumentParser.helpText(for: SpokesTool.tool.subcommands.first { $0.spec.name == command }!.spec, toolName: "spokes"))
            if let range = option.range { #expect(help.contains(range), "\(command) --help shows --\(option.name)'s range") }
        }
    }

    @Test func everyNumericOptionRefusesHugeNonFiniteAndNegativeValuesNamingTheFlag() async {
        for (command, option) in Self.valueOptions where option.range.map({ $0.contains(" to ") }) == true {
            for bad in ["1e21", "inf", "nan", "-1"] {
                let run = await CommandRun.spokes(Self.baseArguments(command) + ["--\(option.name)", bad])
                #expect(run.status == 2, "spokes \(command) --\(option.name) \(bad): \(run.standardError)")
                #expect(run.standardError.contains("--\(option.name)"), "spokes \(command) --\(option.name) \(bad): \(run.standardError)")
                #expect(run.standardOutput.isEmpty)
            }
        }
    }

    @Test func nodeHelpShowsTheSettingsTablesDefaultsAndRanges() async {
        let help = Self.flattened(await CommandRun.spokes("node", "--help").standardOutput)
        #expect(help.contains("(cores, or 1 to 10000; default: cores)"), "--slots: \(help)")
        #expect(help.contains("--peer <HOST:PORT> ..."))
        #expect(help.contains("(1 to 65535; default: 7946)"), "--discovery-port")
        #expect(help.contains("(loopback | lan | off; default: loopback)"), "--discovery")
        #expect(help.contains("(off, or 0 to 65535; default: off)"), "--dashboard")
        #expect(!help.contains("--seed"))
    }
}
