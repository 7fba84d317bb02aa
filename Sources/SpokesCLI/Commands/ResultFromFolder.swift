import FoundationEssentials
import SpokesBikes
import SpokesCluster
import SpokesJobs

/// `spokes result JOB --data-directory DIR`: a finished job's report read from a node's
/// data directory on this machine, with no node running (e.g. after `spokes demo`).
enum ResultFromFolder {
    static let option = Option.string("data-directory", "DIR",
                                      help: "Read the job from this data directory (a stopped node's, e.g. the demo's ~/.spokes/demo) instead of asking a node.")

    /// Prints the report of `job` from `--data-directory` and returns the exit status; nil
    /// when the option was not given (ask a node instead).
    static func emit(job: String, arguments: ParsedArguments, context: CommandContext) throws -> Int32? {
        guard let folder = try arguments.value(option) else { return nil }
        if arguments.isSet(NodeClient.to) { throw UsageError("--data-directory reads a folder, --to asks a node: give one of them") }
        _ = try ReportOutput.htmlPath(arguments)
        let directory = HomeDirectory.expand(folder, environment: context.environment)
        var isFolder = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isFolder), isFolder else {
            context.standardError("error: \(directory) is not a folder; give the data directory of the node that ran the job\n")
            return 1
        }
        let store = JobStore(directory: directory)
        if let report = try store.report(of: job) { return try ReportOutput.emit(report, arguments: arguments, context: context) ? 0 : 1 }
        if let taskJob = try store.taskJobReport(of: job) { return try ResultCommand.emit(taskJob, arguments: arguments, context: context) }
        context.standardError("error: job \(job) is not in \(store.path)\n")
        return 1
    }
}
