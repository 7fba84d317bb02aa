import SpokesBikes

/// One figure of a sweep against one parameter, as an inline SVG: a point per group at
/// its mean, a vertical bar for its 95% confidence interval, and a line per series
/// (the groups that share every other parameter), each in its own colour.
///
/// The parameter's values stand evenly spaced in the order given (ascending for the
/// report's charts), so 100, 200, 400 users read as three steps. The value axis starts
/// at zero (the figures are never negative); an interval reaching below zero is drawn
/// to the axis and its tooltip says where it ends.
struct SweepChartSVG {
    /// A group's summary at one value of the parameter.
    struct Point {
        var category: Int
        var summary: SampleSummary
        var runs: Int
        /// Tooltip: the group's setting in words.
        var name: String
    }

    /// The groups sharing every other parameter, in the order of the categories.
    struct Series {
        /// Legend text (`paths 10`); empty when there is one series.
        var name: String
        var color: String
        var points: [Point]
    }

    /// The parameter's values, as labels.
    let categories: [String]
    let series: [Series]
    /// The parameter, for the x axis title: `users`.
    let categoryAxis: String
    /// The figure with its unit, for the y axis title: `waiting time per user (nominal s)`.
    let valueAxis: String
    /// Appended to values in tooltips: ` s`, or empty.
    let valueUnit: String

    static let width = 480.0
    static let height = 260.0
    private static let left = 56.0, right = 14.0, top = 14.0, bottom = 46.0
    /// Longest category label under the axis (the tooltips have the whole value).
    static let labelLength = 12

    func svg(label: String) -> String {
        let w = Self.width, h = Self.height
        let plotWidth = w - Self.left - Self.right, plotHeight = h - Self.top - Self.bottom
        let baseline = Self.top + plotHeight
        var svg = """
            <svg class="chart sweep" viewBox="0 0 \(HTML.number(w)) \(HTML.number(h))" width="\(HTML.number(w))" \
            height="\(HTML.number(h))" role="img" aria-label="\(HTML.escape(label))" xmlns="http://www.w3.org/2000/svg">

            """
        let highest = series.flatMap(\.points).map { max($0.summary.mean, $0.summary.ci95?.upper ?? 0) }.max() ?? 0
        let yTicks = AxisTicks.upTo(highest, count: 4)
        let yMaximum = yTicks.last ?? 1
        func y(_ value: Double) -> Double { baseline - min(max(value, 0), yMaximum) / yMaximum * plotHeight }
        for tick in yTicks {
            svg += "<line class=\"grid\" x1=\"\(HTML.number(Self.left))\" x2=\"\(HTML.number(w - Self.right))\" "
            svg += "y1=\"\(HTML.number(y(tick)))\" y2=\"\(HTML.number(y(tick)))\"/>"
            svg += "<text class=\"tick\" x=\"\(HTML.number(Self.left - 6))\" y=\"\(HTML.number(y(tick) + 4))\" text-anchor=\"end\">"
            svg += "\(AxisTicks.label(tick))</text>\n"
        }
        let slot = plotWidth / Double(max(1, categories.count))
        let spread = min(10, slot * 0.6 / Double(max(1, series.count)))
        func x(_ category: Int, series index: Int) -> Double {
            Self.left + (Double(category) + 0.5) * slot + (Double(index) - Double(series.count - 1) / 2) * spread
        }
        if series.allSatisfy(\.points.isEmpty) {
            svg += "<text class=\"empty\" x=\"\(HTML.number(Self.left + plotWidth / 2))\" y=\"\(HTML.number(Self.top + plotHeight / 2))\" "
            svg += "text-anchor=\"middle\">no finished runs</text>\n"
        }
        for (index, line) in series.enumerated() {
            let color = HTML.escape(line.color)
            svg += "<g class=\"series\" data-series=\"\(HTML.escape(line.name))\">"
            if line.points.count > 1 {
                let points = line.points.map { "\(HTML.number(x($0.category, series: index))),\(HTML.number(y($0.summary.mean)))" }
                svg += "<polyline class=\"line\" points=\"\(points.joined(separator: " "))\" stroke=\"\(color)\"/>"
            }
            for point in line.points {
                let px = HTML.number(x(point.category, series: index))
                if let interval = point.summary.ci95 {
                    let (top, bottom) = (HTML.number(y(interval.upper)), HTML.number(y(interval.lower)))
                    let (capLeft, capRight) = (HTML.number(x(point.category, series: index) - 4), HTML.number(x(point.category, series: index) + 4))
                    svg += "<path class=\"ci\" d=\"M\(capLeft) \(top)H\(capRight)M\(px) \(top)V\(bottom)M\(capLeft) \(bottom)H\(capRight)\" "
                    svg += "stroke=\"\(color)\"/>"
                }
                svg += "<circle class=\"mean\" cx=\"\(px)\" cy=\"\(HTML.number(y(point.summary.mean)))\" r=\"3.5\" fill=\"\(color)\">"
                svg += "<title>\(HTML.escape(tooltip(point)))</title></circle>"
            }
            svg += "</g>\n"
        }
        svg += "<line class=\"axis\" x1=\"\(HTML.number(Self.left))\" x2=\"\(HTML.number(w - Self.right))\" "
        svg += "y1=\"\(HTML.number(baseline))\" y2=\"\(HTML.number(baseline))\"/>\n"
        let every = max(1, Int((Double(categories.count) / 10).rounded(.up)))
        for (index, category) in categories.enumerated() where index % every == 0 {
            let text = category.count > Self.labelLength ? category.prefix(Self.labelLength - 1) + "…" : category
            svg += "<text class=\"tick\" x=\"\(HTML.number(Self.left + (Double(index) + 0.5) * slot))\" y=\"\(HTML.number(baseline + 16))\" "
            svg += "text-anchor=\"middle\">\(HTML.escape(String(text)))</text>"
        }
        svg += "\n<text class=\"axis-title\" x=\"\(HTML.number(Self.left + plotWidth / 2))\" y=\"\(HTML.number(h - 6))\" "
        svg += "text-anchor=\"middle\">\(HTML.escape(categoryAxis))</text>\n"
        svg += "<text class=\"axis-title\" transform=\"translate(12 \(HTML.number(Self.top + plotHeight / 2))) rotate(-90)\" "
        svg += "text-anchor=\"middle\">\(HTML.escape(valueAxis))</text>\n"
        return svg + "</svg>"
    }

    /// `users 200 · paths 10 ...: mean 0.041 s, 95% CI 0.037 to 0.045 s, p50 0.04 s, p95 0.05 s (32 runs)`.
    private func tooltip(_ point: Point) -> String {
        let summary = point.summary
        var text = "\(point.name): mean \(value(summary.mean))"
        if let interval = summary.ci95 { text += ", 95% CI \(value(interval.lower)) to \(value(interval.upper))" }
        text += ", p50 \(value(summary.p50)), p95 \(value(summary.p95)) (\(point.runs) run\(point.runs == 1 ? "" : "s"))"
        return text
    }

    private func value(_ number: Double) -> String {
        AxisTicks.label(number) + valueUnit
    }
}
