/// The `spokes` command-line tool: its subcommands and version.
public enum SpokesTool {
    public static let version = "0.1.0"

    public static let tool = CommandLineTool(
        name: "spokes",
        abstract: "Spokes: a zero-dependency Swift worker cluster, with a bike-share simulation as its workload.",
        version: version,
        subcommands: [DemoCommand.subcommand, SimulateCommand.subcommand, SubmitCommand.subcommand, NodeCommand.subcommand, StatusCommand.subcommand, JobsCommand.subcommand, ResultCommand.subcommand, CancelCommand.subcommand, StopCommand.subcommand, BenchCommand.subcommand])

    /// Runs the tool on `arguments` (without the program name) and returns the exit status.
    public static func main(_ arguments: [String], context: CommandContext = .process) async -> Int32 {
        await tool.run(arguments, context: context)
    }
}
