import Testing
@testable import SpokesCLI

@Suite struct ArgumentParserTests {
    let spec = CommandSpec(
        name: "go", abstract: "Go somewhere.",
        options: [
            .value("users", "U", help: "How many users.", default: "10"),
            .value("seed", "N", help: "A seed."),
            .value("scale", "X", help: "A scale."),
            .flag("json", help: "Print JSON."),
        ])

    func parse(_ arguments: String...) throws(UsageError) -> ParsedArguments {
        guard case .run(let parsed) = try ArgumentParser.parse(arguments, as: spec, toolName: "tool") else {
            throw UsageError("asked for help")
        }
        return parsed
    }

    func usageError(_ arguments: String...) -> String? {
        do {
            _ = try ArgumentParser.parse(arguments, as: spec, toolName: "tool")
            return nil
        } catch {
            return error.message
        }
    }

    @Test func readsSeparateAndInlineValues() throws {
        let parsed = try parse("--users", "5", "--seed=7", "--json")
        #expect(try parsed.integer("users") == 5)
        #expect(try parsed.integer("seed") == 7)
        #expect(parsed.flag("json"))
        #expect(parsed.isSet("users") && !parsed.isSet("scale"))
    }

    @Test func fallsBackToTheDefault() throws {
        let parsed = try parse()
        #expect(try parsed.integer("users") == 10)
        #expect(!parsed.isSet("users"), "a default is not an explicit setting")
        #expect(try parsed.integer("seed") == nil)
    }

    @Test func negativeNumbersAreValues() throws {
        #expect(try parse("--seed", "-5").integer("seed") == -5)
        #expect(try parse("--scale", "-.5").double("scale") == -0.5)
    }

    @Test func helpAnywhereAsksForHelp() throws {
        guard case .help(let text) = try ArgumentParser.parse(["--users", "x", "-h"], as: spec, toolName: "tool") else {
            Issue.record("expected help")
            return
        }
        #expect(text.hasPrefix("Go somewhere."))
    }

    @Test func unknownOptionSuggestsTheNearest() {
        #expect(usageError("--usres", "3") == "unknown option '--usres'. Did you mean '--users'?")
        #expect(usageError("--zzzzzz") == "unknown option '--zzzzzz'")
        #expect(usageError("-u") == "unknown option '-u'")
    }

    @Test func missingValueNamesTheFlag() {
        #expect(usageError("--users") == "--users needs a value: --users <U>")
        #expect(usageError("--users", "--json") == "--users needs a value: --users <U>")
    }

    @Test func flagsTakeNoValue() {
        #expect(usageError("--json=yes") == "--json is a flag and takes no value")
    }

    @Test func aValueOptionGivenTwiceIsAnError() {
        #expect(usageError("--users", "1", "--users", "2") == "--users was given twice")
    }

    @Test func positionalArgumentsAreRefused() {
        #expect(usageError("extra") == "unexpected argument 'extra'")
        #expect(usageError("--", "extra") == "unexpected argument 'extra'")
    }

    @Test func aNamedPositionalFillsItsOption() throws {
        let withPositional = CommandSpec(name: "result", abstract: "R.", options: [.value("job", "JOB", help: "Job.")], positional: "job")
        guard case .run(let parsed) = try ArgumentParser.parse(["job-1"], as: withPositional, toolName: "tool") else {
            Issue.record("expected run")
            return
        }
        #expect(try parsed.string("job") == "job-1")
        #expect(throws: UsageError("unexpected argument 'job-2'")) {
            try ArgumentParser.parse(["job-1", "job-2"], as: withPositional, toolName: "tool")
        }
    }

    @Test(arguments: ["abc", "1e3", "0x10", " 5", "5.0", "+5", ""])
    func integersArePlainDecimal(_ text: String) throws {
        let parsed = try parse("--users", text)
        #expect(throws: UsageError("--users expects an integer, got '\(text)'")) { try parsed.integer("users") }
    }

    @Test func integersOutsideTheRangeNameIt() throws {
        let parsed = try parse("--users", "0")
        #expect(throws: UsageError("--users must be between 1 and 100, got 0")) { try parsed.integer("users", in: 1...100) }
        #expect(throws: UsageError("--users must be at least 1, got 0")) { try parsed.integer("users", in: 1...Int.max) }
        let huge = try parse("--users", "99999999999999999999")
        #expect(throws: UsageError.self) { try huge.integer("users") }
    }

    @Test(arguments: ["nan", "inf", "1e999", "0x1p3", "1,5", "."])
    func doublesMustBeFiniteDecimals(_ text: String) throws {
        let parsed = try parse("--scale", text)
        #expect(throws: UsageError("--scale expects a number, got '\(text)'")) { try parsed.double("scale") }
    }

    @Test func doublesAreRangeChecked() throws {
        #expect(try parse("--scale", "2.5").double("scale", in: 0...10) == 2.5)
        #expect(throws: UsageError("--scale must be between 0 and 10, got 11")) {
            try parse("--scale", "11").double("scale", in: 0...10)
        }
    }

    @Test func helpTextLayout() {
        let small = CommandSpec(
            name: "go", abstract: "Go somewhere.", discussion: "Goes.",
            options: [.value("to", "PLACE", help: "Where to.", default: "home"), .flag("fast", help: "Hurry.")])
        #expect(ArgumentParser.helpText(for: small, toolName: "tool") == """
            Go somewhere.

            USAGE: tool go [--to <PLACE>] [--fast]

            Goes.

            OPTIONS:
              --to <PLACE>  Where to. (default: home)
              --fast        Hurry.
              -h, --help    Show help information.

            """)
    }

    @Test func longHelpWrapsUnderItsColumn() {
        let text = ArgumentParser.table([("--x", String(repeating: "word ", count: 30))])
        let lines = text.split(separator: "\n")
        #expect(lines.count > 1)
        #expect(lines.allSatisfy { $0.count <= 80 })
        #expect(lines.dropFirst().allSatisfy { $0.hasPrefix("       w") })
    }
}
