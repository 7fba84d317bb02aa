import FoundationEssentials
import Glibc
import SpokesBikes
import SpokesCluster

/// The `spokes` command-line tool: its subcommands and version.
///
/// An app that has task kinds of its own builds an executable whose `main.swift` is
///
/// ```swift
/// import SpokesCLI
///
/// await SpokesTool.main(kinds: [PiSample()])
/// ```
///
/// and gets the whole tool (`node`, `status`, `run`, `submit`, `demo`, ...) under its own
/// name, with every node it starts running those kinds besides the built-in ones
/// (README, "Your own tasks"; `Examples/MonteCarloPi`).
public enum SpokesTool {
    /// The release version (``SpokesVersion/release``), which `--version` prints.
    public static let version = SpokesVersion.release

    /// `spokes`, whose nodes run the built-in kinds.
    public static let tool = tool(named: "spokes")

    /// The tool named `name` (in help and errors), whose nodes also run `kinds`.
    public static func tool(named name: String, kinds: [any TaskKind] = []) -> CommandLineTool {
        let own = kinds.isEmpty ? "" : " This build also runs: \(kinds.map { type(of: $0).name }.joined(separator: ", "))."
        return CommandLineTool(
            name: name,
            abstract: "Spokes: a zero-dependency Swift worker cluster, with a bike-share simulation as its workload." + own,
            version: version,
            subcommands: [DemoCommand.subcommand, SimulateCommand.subcommand, SubmitCommand.subcommand, NodeCommand.subcommand(kinds: kinds),
                          StatusCommand.subcommand, RunCommand.subcommand(kinds: kinds, name: "map"), RunCommand.subcommand(kinds: kinds), SweepCommand.subcommand, JobsCommand.subcommand, ResultCommand.subcommand,
                          CancelCommand.subcommand, StopCommand.subcommand, KeyringCommand.subcommand, DoctorCommand.subcommand, BenchCommand.subcommand, InitCommand.subcommand, VersionCommand.subcommand])
    }

    /// The task kinds every node this tool starts runs: the built-in benchmark kinds, the
    /// bike workload's (``BikeKinds``) and `kinds`. The one place a node's registry is made.
    public static func registry(kinds: [any TaskKind] = []) -> TaskRegistry {
        TaskRegistry(kinds: BikeKinds.all + kinds)
    }

    /// Runs the tool on `arguments` (without the program name) and returns the exit status.
    /// `kinds` are added to the nodes it starts; a kind named like another (a built-in
    /// one included) or badly named exits 1 saying which.
    public static func main(_ arguments: [String], context: CommandContext = .process, kinds: [any TaskKind] = [], name: String = "spokes") async -> Int32 {
        BikeLimits.declare()
        do {
            try TaskRegistry.validate(TaskRegistry.builtInKinds + BikeKinds.all + kinds)
        } catch {
            context.standardError("\(name): \(error)\n")
            return 1
        }
        return await tool(named: name, kinds: kinds).run(arguments, context: context)
    }

    /// The whole tool as a program: runs it on the process's arguments, named after the
    /// executable, with `kinds` added to every node it starts, and exits with its status.
    public static func main(kinds: [any TaskKind]) async -> Never {
        let name = CommandLine.arguments.first.map { URL(fileURLWithPath: $0).lastPathComponent } ?? "spokes"
        exit(await main(Array(CommandLine.arguments.dropFirst()), kinds: kinds, name: name))
    }
}
