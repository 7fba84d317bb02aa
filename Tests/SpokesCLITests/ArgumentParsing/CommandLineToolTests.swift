import Synchronization
import Testing
@testable import SpokesCLI

@Suite struct CommandLineToolTests {
    struct Failure: Error, CustomStringConvertible {
        var description: String { "the disk is full" }
    }

    let tool = CommandLineTool(
        name: "tool", abstract: "A tool.", version: "1.2.3",
        subcommands: [
            Subcommand(spec: CommandSpec(name: "echo", abstract: "Echo.", options: [.value("text", "T", help: "Text.")])) { arguments, context in
                context.standardOutput((try arguments.string("text") ?? "") + "\n")
                return 0
            },
            Subcommand(spec: CommandSpec(name: "fail", abstract: "Fail.", options: [.flag("usage", help: "Usage error.")])) { arguments, _ in
                if arguments.flag("usage") { throw UsageError("--usage was given") }
                throw Failure()
            },
        ])

    func run(_ arguments: String...) async -> (status: Int32, out: String, err: String) {
        let output = Mutex(("", ""))
        let context = CommandContext(
            standardOutput: { text in output.withLock { $0.0 += text } },
            standardError: { text in output.withLock { $0.1 += text } },
            standardErrorIsTerminal: false)
        let status = await tool.run(arguments, context: context)
        return output.withLock { (status, $0.0, $0.1) }
    }

    @Test func noArgumentsPrintsTheOverviewOnStderrAndExitsTwo() async {
        let result = await run()
        #expect(result.status == 2)
        #expect(result.err.contains("SUBCOMMANDS:"))
        #expect(result.err.contains("echo  Echo."))
    }

    @Test func helpAndVersionExitZero() async {
        #expect(await run("--help").out.contains("USAGE: tool <subcommand> [options]"))
        #expect(await run("help", "echo").out.contains("--text <T>"))
        #expect(await run("echo", "--help").status == 0)
        let version = await run("--version")
        #expect(version.status == 0 && version.out == "1.2.3\n")
    }

    @Test func unknownSubcommandSuggestsTheNearest() async {
        let result = await run("ecoh")
        #expect(result.status == 2)
        #expect(result.err.hasPrefix("error: unknown subcommand 'ecoh'. Did you mean 'echo'?"))
    }

    @Test func runsTheSubcommand() async {
        let result = await run("echo", "--text", "hi")
        #expect(result.status == 0)
        #expect(result.out == "hi\n")
    }

    @Test func usageErrorsExitTwoWithUsage() async {
        let result = await run("fail", "--usage")
        #expect(result.status == 2)
        #expect(result.err == """
            error: --usage was given

            USAGE: tool fail [--usage]
            See 'tool fail --help'.

            """)
    }

    @Test func otherErrorsExitOneWithTheirDescription() async {
        let result = await run("fail")
        #expect(result.status == 1)
        #expect(result.err == "error: the disk is full\n")
    }
}
