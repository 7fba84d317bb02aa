import FoundationEssentials
import SpokesBikes
import SpokesCluster
import SpokesConcurrency

/// A finished sweep's report as one self-contained HTML5 file, like ``JobReportPage``:
/// inline CSS and SVG, no scripts, nothing fetched; the same report always renders to
/// the same bytes.
///
/// Sections: the verdict (bikes conserved in every run, failed runs), the key figures,
/// for each varied parameter a chart of each figure against it (mean and 95% confidence
/// interval per group; one line per combination of the other varied parameters), or
/// when only the seed varies each figure's distribution over the runs; a table of every
/// group; each node's share of the runs; the failed runs with their reasons.
public enum SweepReportPage {
    /// Groups listed in the table before "and N more".
    static let listedGroups = 200
    /// Failed runs listed before "and N more".
    static let listedFailures = 50
    /// Lines per chart: one colour each.
    static let maximumSeries = NodePalette.colors.count

    /// The report page of `report`; `generatedAt` is printed in UTC.
    public static func html(_ report: SweepReport, generatedAt: Date) -> String {
        let title = "\(report.network.name) (\(report.network.id))" + (report.job.map { " · \($0)" } ?? "")
        var page = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="generator" content="Spokes">
            <title>Spokes sweep: \(HTML.escape(title))</title>
            <style>\(style)</style>
            </head>
            <body>
            <main>

            """
        page += masthead(report, generatedAt: generatedAt)
        page += verdict(report)
        page += figures(report)
        let varied = report.varied
        if varied.isEmpty {
            page += distributions(report)
        } else {
            for parameter in varied { page += charts(report, against: parameter) }
        }
        page += groupTable(report)
        page += nodeShare(report)
        page += failures(report)
        page += """
            <footer>Made by Spokes. Each run is <code>spokes simulate --workers 1</code> with its parameters and seed. \
            Intervals are 95% confidence intervals of the mean (Student's t); waiting time is nominal, counted in moves.</footer>
            </main>
            </body>
            </html>

            """
        return page
    }

    // MARK: Sections

    private static func masthead(_ report: SweepReport, generatedAt: Date) -> String {
        var meta: [String] = []
        if let job = report.job { meta.append("Job <code>\(HTML.escape(job))</code>") }
        meta.append("\(report.network.stations) station\(report.network.stations == 1 ? "" : "s")")
        meta.append("generated \(JobReportPage.utc(generatedAt))")
        return """
            <header class="masthead">
            <p class="eyebrow"><span class="logo">◎ Spokes</span> · sweep report</p>
            <h1>\(HTML.escape(report.network.name)) <span class="network-id">(\(HTML.escape(report.network.id)))</span></h1>
            <p class="meta">\(meta.joined(separator: " · "))</p>
            </header>

            """
    }

    private static func verdict(_ report: SweepReport) -> String {
        let finished = report.runs.count - report.failedRuns
        var html = ""
        if report.runsNotConserved == 0 {
            html += """
                <section class="verdict ok" id="conservation"><span class="mark">✓</span><div>\
                <p><strong>Bikes conserved in every run</strong></p><p>\(finished) finished run\(finished == 1 ? "" : "s"): \
                in each, no bike appeared or vanished.</p></div></section>

                """
        } else {
            let count = report.runsNotConserved
            html += """
                <section class="verdict bad" id="conservation" role="alert"><span class="mark">⚠</span><div>\
                <p><strong>Bikes NOT conserved in \(count) run\(count == 1 ? "" : "s")</strong></p><p>Their groups are \
                marked in the table below; each run's violations are in the JSON report.</p></div></section>

                """
        }
        if report.failedRuns > 0 {
            let count = report.failedRuns
            html += """
                <section class="verdict bad" id="outcome"><span class="mark">✕</span><div>\
                <p><strong>\(count) run\(count == 1 ? "" : "s") failed</strong></p><p>Every attempt failed; \
                \(count == 1 ? "it is" : "they are") left out of the statistics and listed under Failed runs.</p></div></section>

                """
        }
        return html
    }

    private static func figures(_ report: SweepReport) -> String {
        let varied = report.varied
        let nodes = report.runsPerNode
        var tiles = [
            figure("Runs", "\(report.runs.count - report.failedRuns) / \(report.runs.count)", "finished"),
            figure("Groups", "\(report.groups.count)", "settings, each over its seeds"),
            figure("Varied", varied.isEmpty ? "seed only" : varied.map(\.name).joined(separator: ", "), "charted below"),
            figure("Nodes", "\(nodes.count)", nodes.isEmpty ? "one process" : "ran the runs"),
        ]
        if let wall = report.wallTime {
            let rate = wall > 0 ? String(printf: "%.1f runs/s", Double(report.runs.count - report.failedRuns) / wall) : ""
            tiles.append(figure("Wall time", JobReportPage.seconds(wall), rate))
        }
        return "<section class=\"figures\">\n" + tiles.joined() + "</section>\n"
    }

    private static func figure(_ name: String, _ value: String, _ detail: String) -> String {
        "<div class=\"figure\"><span class=\"name\">\(name)</span><span class=\"value\">\(HTML.escape(value))</span>"
            + "<span class=\"detail\">\(HTML.escape(detail))</span></div>\n"
    }

    /// Every figure against `parameter`: one chart per figure, one line per combination
    /// of the other varied parameters.
    private static func charts(_ report: SweepReport, against parameter: SweepParameter) -> String {
        let others = report.varied.filter { $0 != parameter }
        let categories = Array(Set(report.groups.compactMap { $0.setting.value(of: parameter) })).sorted()
        var keys: [[SweepValue]] = []
        var members: [[SweepValue]: [SweepReport.Group]] = [:]
        for group in report.groups {
            let key = others.compactMap { group.setting.value(of: $0) }
            if members[key] == nil { keys.append(key) }
            members[key, default: []].append(group)
        }
        let shown = keys.prefix(maximumSeries)
        var html = "<section class=\"against\" id=\"by-\(parameter.key)\"><h2>Figures against \(parameter.name)</h2>\n"
        html += "<p class=\"note\">Each point is a group's mean over its runs, with its 95% confidence interval"
        html += others.isEmpty ? ".</p>\n" : "; one line per value of \(others.map(\.name).joined(separator: " and ")).</p>\n"
        html += "<div class=\"pair\">\n"
        for figure in SweepFigure.allCases {
            let series = shown.enumerated().map { index, key in
                let groups = members[key] ?? []
                let points = groups.compactMap { group -> SweepChartSVG.Point? in
                    guard let value = group.setting.value(of: parameter), let category = categories.firstIndex(of: value),
                          let summary = group.summary(of: figure) else { return nil }
                    return SweepChartSVG.Point(category: category, summary: summary, runs: group.runs, name: group.setting.label)
                }.sorted { $0.category < $1.category }
                let name = groups.first.map { group in others.map { group.setting.label(of: $0) }.joined(separator: " · ") } ?? ""
                return SweepChartSVG.Series(name: name, color: NodePalette.colors[index % NodePalette.colors.count], points: points)
            }
            let chart = SweepChartSVG(
                categories: categories.map(\.description), series: series,
                categoryAxis: parameter.name + (parameter == .moveTime ? " (s)" : ""), valueAxis: axisTitle(figure),
                valueUnit: figure.isSeconds ? " s" : "")
            html += "<figure class=\"\(figure.key)\"><figcaption>\(caption(figure))</figcaption>\n"
            html += chart.svg(label: "\(caption(figure)) against \(parameter.name)") + "</figure>\n"
        }
        html += "</div>\n"
        if shown.count > 1 { html += legend(shown.map { key in members[key]?.first.map { group in
            others.map { group.setting.label(of: $0) }.joined(separator: " · ") } ?? "" }) }
        if keys.count > shown.count {
            html += "<p class=\"note\">\(keys.count - shown.count) more lines are left out of these charts; every group is in the table below.</p>\n"
        }
        return html + "</section>\n"
    }

    /// Colour keys for the lines of a chart, in series order.
    private static func legend(_ names: [String]) -> String {
        let keys = names.enumerated().map { index, name in
            "<span class=\"key\"><svg width=\"12\" height=\"12\" viewBox=\"0 0 12 12\" aria-hidden=\"true\"><circle cx=\"6\" cy=\"6\" "
                + "r=\"5\" fill=\"\(NodePalette.colors[index % NodePalette.colors.count])\"/></svg>\(HTML.escape(name))</span>"
        }
        return "<div class=\"legend\">" + keys.joined() + "</div>\n"
    }

    /// When only the seed varies: how each figure spread over the runs.
    private static func distributions(_ report: SweepReport) -> String {
        let finished = report.runs.filter { $0.figures != nil }
        var html = "<section id=\"distributions\"><h2>Over the seeds</h2>\n"
        html += "<p class=\"note\">Only the seed varies: each chart counts the runs by their figure.</p>\n<div class=\"pair\">\n"
        for figure in SweepFigure.allCases {
            let values = finished.compactMap { figure.value(in: $0) }
            let histogram = Histogram(values: values, step: figure.isSeconds ? 0 : 1)
            let chart = HistogramSVG(
                histogram: histogram, valueAxis: axisTitle(figure), valueUnit: figure.isSeconds ? "s" : "",
                countName: "runs", countNameSingular: "run", oneValuePerBin: !figure.isSeconds && histogram.width == 1)
            html += "<figure class=\"\(figure.key)\"><figcaption>\(caption(figure)) <span class=\"counts\">· \(values.count) runs</span>"
            html += "</figcaption>\n\(chart.svg(label: "Histogram of \(figure.name) over the runs"))</figure>\n"
        }
        return html + "</div></section>\n"
    }

    private static func groupTable(_ report: SweepReport) -> String {
        // The setting column names what varies; what every group shares is said once.
        let varied = report.varied
        let fixed = SweepParameter.grouping.filter { !varied.contains($0) }
        var html = "<section id=\"groups\" class=\"long\"><h2>Groups</h2>\n"
        if let first = report.groups.first, !varied.isEmpty {
            let shared = fixed.filter { $0 != .goal || first.setting.goal != nil }.map { first.setting.label(of: $0) }
            html += "<p class=\"note\">Every group: \(HTML.escape(shared.joined(separator: " · ")))</p>\n"
        }
        html += "<table class=\"groups\"><thead><tr><th>Setting</th><th class=\"number\">Runs</th>"
        for figure in SweepFigure.allCases { html += "<th class=\"number\">\(caption(figure))</th>" }
        html += "</tr></thead><tbody>\n"
        for group in report.groups.prefix(listedGroups) {
            var runs = "\(group.runs)"
            if group.failedRuns > 0 { runs += "<br><span class=\"bad-text\">\(group.failedRuns) failed</span>" }
            if group.runsNotConserved > 0 { runs += "<br><span class=\"bad-text\">\(group.runsNotConserved) NOT CONSERVED</span>" }
            let setting = varied.isEmpty ? group.setting.label : varied.map { group.setting.label(of: $0) }.joined(separator: " · ")
            html += "<tr><td>\(HTML.escape(setting))</td><td class=\"number\">\(runs)</td>"
            for figure in SweepFigure.allCases {
                html += "<td class=\"number\">\(cell(group.summary(of: figure), seconds: figure.isSeconds))</td>"
            }
            html += "</tr>\n"
        }
        html += "</tbody></table>\n"
        if report.groups.count > listedGroups {
            html += "<p class=\"note\">and \(report.groups.count - listedGroups) more groups (see the JSON report)</p>\n"
        }
        return html + "</section>\n"
    }

    /// `0.041 s` over `0.037 to 0.045 · p50 0.04 · p95 0.05`.
    private static func cell(_ summary: SampleSummary?, seconds: Bool) -> String {
        guard let summary else { return "—" }
        let unit = seconds ? " s" : ""
        var detail = summary.ci95.map { "\(AxisTicks.label($0.lower)) to \(AxisTicks.label($0.upper))" } ?? "one run"
        detail += " · p50 \(AxisTicks.label(summary.p50)) · p95 \(AxisTicks.label(summary.p95))"
        return "<strong>\(AxisTicks.label(summary.mean))\(unit)</strong><br><span class=\"spread\">\(detail)</span>"
    }

    private static func nodeShare(_ report: SweepReport) -> String {
        let shares = report.runsPerNode
        guard !shares.isEmpty else {
            return "<section id=\"nodes\"><h2>Runs per node</h2>\n<p>Every run ran in this process.</p></section>\n"
        }
        let chart = NodeShareSVG(shares: shares, countName: "runs").svg(label: "Runs per node")
        return "<section id=\"nodes\"><h2>Runs per node</h2>\n\(chart)\n</section>\n"
    }

    private static func failures(_ report: SweepReport) -> String {
        let failed = report.runs.filter { $0.figures == nil }
        guard !failed.isEmpty else { return "" }
        var html = "<section id=\"failures\" class=\"long\"><h2>Failed runs</h2>\n"
        html += "<table class=\"users\"><thead><tr><th>Run</th><th>Reasons, attempt by attempt</th></tr></thead><tbody>\n"
        for run in failed.prefix(listedFailures) {
            let reasons = (run.failures ?? []).map { "<li>\(HTML.escape($0))</li>" }.joined()
            html += "<tr><td>\(HTML.escape(run.run.setting.label)) · seed \(run.run.seed)</td>"
            html += "<td><ul class=\"reasons\">\(reasons.isEmpty ? "<li>no reason recorded</li>" : reasons)</ul></td></tr>\n"
        }
        html += "</tbody></table>\n"
        if failed.count > listedFailures {
            html += "<p class=\"note\">and \(failed.count - listedFailures) more (see the JSON report)</p>\n"
        }
        return html + "</section>\n"
    }

    // MARK: Wording

    /// `Waiting time per user`.
    private static func caption(_ figure: SweepFigure) -> String {
        figure.name.prefix(1).uppercased() + figure.name.dropFirst()
    }

    /// `waiting time per user (nominal s)`, `paths ridden per run`.
    private static func axisTitle(_ figure: SweepFigure) -> String {
        figure.isSeconds ? "\(figure.name) (nominal s)" : "\(figure.name) per run"
    }
}

extension SweepReportPage {
    /// The page's only CSS: the job report's, and the sweep charts' few rules.
    static let style = JobReportPage.style + #"""

        svg.sweep .line { fill: none; stroke-width: 1.5; stroke-opacity: .6; }
        svg.sweep .ci { fill: none; stroke-width: 1.5; }
        svg.sweep .mean { stroke: #ffffff; stroke-width: 1; }
        table.groups td { font-size: 14px; }
        table.groups td:first-child { overflow-wrap: anywhere; }
        table.groups .spread { color: var(--muted); font-size: 12px; white-space: nowrap; }
        section.against > .pair { row-gap: 24px; }
        """#

    /// A Content-Security-Policy under which the page renders exactly as it is (see
    /// ``JobReportPage/contentSecurityPolicy``).
    public static let contentSecurityPolicy: String = {
        let digest = Data(SHA256.hash(Array(style.utf8))).base64EncodedString()
        return "default-src 'none'; style-src 'sha256-\(digest)'; img-src data:; base-uri 'none'; form-action 'none'"
    }()
}
