import FoundationEssentials
import SpokesBikes
import SpokesConcurrency

/// Turns a ``SweepReport`` into what `spokes sweep` prints: pretty JSON, or a summary
/// with one table per group (each figure's mean, p50, p95 and 95% confidence interval).
enum SweepReportFormatter {
    /// Groups shown in the summary before "and N more" (all of them are in `--json`).
    static let listedGroups = 50

    /// The report as pretty JSON with sorted keys, as `simulate --json` prints its own.
    static func json(_ report: SweepReport) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(report), as: UTF8.self)
    }

    /// The summary: what ran where, then a table per group.
    ///
    /// ```text
    /// BikeMi (bikemi): 318 stations · 96 runs in 3 groups · varied: users
    /// Runs per node: n1 50, n2 46
    ///
    /// users 100 · paths 10 · move time 0.1 s · time scale 0 · 32 runs
    ///   figure                   mean     p50     p95  95% CI of the mean
    ///   waiting time per user  0.031 s 0.030 s 0.052 s  0.027 s to 0.035 s
    ///   ...
    /// ```
    static func summary(_ report: SweepReport) -> String {
        let network = report.network
        var lines: [String] = []
        var heading = "\(network.name) (\(network.id)): \(network.stations) station\(network.stations == 1 ? "" : "s")"
        heading += " · \(plural(report.runs.count, "run")) in \(plural(report.groups.count, "group"))"
        let varied = report.varied
        heading += varied.isEmpty ? " · only the seed varies" : " · varied: " + varied.map(\.name).joined(separator: ", ")
        lines.append(heading)
        let nodes = report.runsPerNode.sorted { $0.key < $1.key }
        if !nodes.isEmpty { lines.append("Runs per node: " + nodes.map { "\($0.key) \($0.value)" }.joined(separator: ", ")) }
        if let job = report.job { lines.append("Job: \(job)") }
        if let wall = report.wallTime {
            let rate = wall > 0 ? String(printf: " (%.1f runs/s)", Double(report.runs.count - report.failedRuns) / wall) : ""
            lines.append("Wall time: \(String(printf: "%.2f s", wall))\(rate)")
        }
        if report.failedRuns > 0 { lines.append("Failed runs: \(report.failedRuns) (every attempt failed; see --json)") }
        if report.runsNotConserved > 0 { lines.append("NOT CONSERVED: \(plural(report.runsNotConserved, "run")) lost or made bikes") }
        for group in report.groups.prefix(listedGroups) {
            lines.append("")
            lines += table(group)
        }
        if report.groups.count > listedGroups {
            lines.append("")
            lines.append("... and \(report.groups.count - listedGroups) more groups (see --json)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A group's title line and its table, columns aligned.
    static func table(_ group: SweepReport.Group) -> [String] {
        var title = "\(group.setting.label) · \(plural(group.runs, "run"))"
        if group.failedRuns > 0 { title += " (\(group.failedRuns) failed)" }
        if group.runsNotConserved > 0 { title += " · \(group.runsNotConserved) NOT CONSERVED" }
        var rows: [[String]] = [["figure", "mean", "p50", "p95", "95% CI of the mean"]]
        for figure in SweepFigure.allCases {
            guard let summary = group.summary(of: figure) else { continue }
            let show = { (value: Double) in figure.isSeconds ? seconds(value) : count(value) }
            let interval = summary.ci95.map { "\(show($0.lower)) to \(show($0.upper))" } ?? "— (one run)"
            rows.append([figure.name, show(summary.mean), show(summary.p50), show(summary.p95), interval])
        }
        guard rows.count > 1 else { return [title, "  no run of this group finished"] }
        let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        let body = rows.map { row in
            "  " + row.enumerated().map { column, text in
                column == 0 || column == row.count - 1
                    ? text.padded(to: widths[column])
                    : String(repeating: " ", count: widths[column] - text.count) + text
            }.joined(separator: "  ")
        }
        return [title] + body.map { $0.replacing(/\s+$/, with: "") }
    }

    /// Nominal seconds with three decimals (per-user waits are small): `0.031 s`, `12.5 s`.
    static func seconds(_ value: Double) -> String {
        value == 0 ? "0 s" : String(printf: abs(value) < 10 ? "%.3f s" : "%.1f s", value)
    }

    /// A count, or a mean of counts: `12`, `12.3`.
    static func count(_ value: Double) -> String {
        value.rounded() == value && abs(value) < 1e15 ? String(Int(value)) : String(printf: "%.1f", value)
    }

    private static func plural(_ count: Int, _ noun: String) -> String {
        "\(count) \(noun)\(count == 1 ? "" : "s")"
    }
}
