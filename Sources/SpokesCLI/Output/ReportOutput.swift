import FoundationEssentials
import Glibc
import SpokesBikes
import SpokesConcurrency
import SpokesDashboard

/// How `simulate`, `submit`, `demo` and `result` hand a report to the user: the summary or
/// `--json` on stdout, and with `--html FILE` one self-contained page (see ``JobReportPage``).
enum ReportOutput {
    static let htmlOption = OptionSpec.value(
        "html", "FILE",
        help: "Also write the report as one self-contained HTML page to FILE: summary, per-node split, waiting and paths per user, station maps before and after, retries and failures.")

    /// The `--html` file, checked before any work is done: its folder must exist, so a long
    /// job never ends with nowhere to put its page.
    static func htmlPath(_ arguments: ParsedArguments) throws -> String? {
        guard let path = try arguments.string("html") else { return nil }
        let folder = DiskPath.parent(of: path)
        var isFolder = false
        guard !path.isEmpty, !path.hasSuffix("/"),
              FileManager.default.fileExists(atPath: folder.isEmpty ? "." : folder, isDirectory: &isFolder), isFolder else {
            throw UsageError("--html \(path): the folder \(path.hasSuffix("/") || path.isEmpty ? path : folder) does not exist; give a file path in an existing folder")
        }
        return path
    }

    /// Prints `report` (summary, or JSON with `--json`) and writes the `--html` page if
    /// asked. Returns false when the page could not be written, or the coordinator could
    /// not store the report: the error is printed and the report itself is still on stdout.
    static func emit(_ report: SimulationReport, arguments: ParsedArguments, context: CommandContext) throws -> Bool {
        if arguments.flag("json") {
            context.standardOutput(try ReportFormatter.json(report) + "\n")
        } else {
            context.standardOutput(ReportFormatter.summary(report))
        }
        if let warning = storeWarning(report) { context.standardError(warning + "\n") }
        guard let path = try htmlPath(arguments) else { return report.stored != false }
        do {
            try Data(JobReportPage.html(report, generatedAt: Date(timeIntervalSince1970: RealClock().unixNow)).utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            context.standardError("report written to \(path)\n")
            return report.stored != false
        } catch {
            context.standardError("error: cannot write the HTML report to \(path): \(DiskError.reason(of: error))\n")
            return false
        }
    }

    /// The line that tells the submitter its report was not stored, or nil when it was
    /// (or was never meant to be: `simulate`).
    static func storeWarning(_ report: SimulationReport) -> String? {
        guard report.stored == false else { return nil }
        return "warning: the coordinator could not store job \(report.job ?? "?"): \(report.storeError ?? "no reason given"); "
            + "'spokes result' will not find it, so keep this output"
    }
}
