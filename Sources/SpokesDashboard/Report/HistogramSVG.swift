/// A ``Histogram`` as an inline SVG bar chart with both axes labelled and a `<title>`
/// tooltip on every bar.
struct HistogramSVG {
    let histogram: Histogram
    /// The x axis title, with its unit: `waiting time per user (nominal seconds)`.
    let valueAxis: String
    /// Appended to a value in tooltips: `s`, or empty.
    let valueUnit: String
    /// What is counted, plural (`users`) and singular (`user`).
    let countName: String
    let countNameSingular: String
    /// True when each bin holds one possible value (label bars, not edges).
    let oneValuePerBin: Bool

    static let width = 480.0
    static let height = 250.0
    private static let left = 48.0, right = 14.0, top = 14.0, bottom = 46.0

    func svg(label: String) -> String {
        let w = Self.width, h = Self.height
        let plotWidth = w - Self.left - Self.right, plotHeight = h - Self.top - Self.bottom
        let baseline = Self.top + plotHeight
        var svg = """
            <svg class="chart" viewBox="0 0 \(HTML.number(w)) \(HTML.number(h))" width="\(HTML.number(w))" \
            height="\(HTML.number(h))" role="img" aria-label="\(HTML.escape(label))" xmlns="http://www.w3.org/2000/svg">

            """
        let yTicks = AxisTicks.upTo(Double(histogram.largestCount), count: 4, integers: true)
        let yMaximum = yTicks.last ?? 1
        for tick in yTicks {
            let y = baseline - tick / yMaximum * plotHeight
            svg += "<line class=\"grid\" x1=\"\(HTML.number(Self.left))\" x2=\"\(HTML.number(w - Self.right))\" "
            svg += "y1=\"\(HTML.number(y))\" y2=\"\(HTML.number(y))\"/>"
            svg += "<text class=\"tick\" x=\"\(HTML.number(Self.left - 6))\" y=\"\(HTML.number(y + 4))\" text-anchor=\"end\">"
            svg += "\(AxisTicks.label(tick))</text>\n"
        }
        let bins = histogram.bins
        if bins.isEmpty {
            svg += "<text class=\"empty\" x=\"\(HTML.number(Self.left + plotWidth / 2))\" y=\"\(HTML.number(Self.top + plotHeight / 2))\" "
            svg += "text-anchor=\"middle\">no \(HTML.escape(countName))</text>\n"
        }
        let slot = bins.isEmpty ? plotWidth : plotWidth / Double(bins.count)
        let gap = min(2, slot * 0.15)
        for (index, bin) in bins.enumerated() {
            let barHeight = Double(bin.count) / yMaximum * plotHeight
            let x = Self.left + Double(index) * slot
            svg += "<rect class=\"bar\" x=\"\(HTML.number(x + gap / 2))\" y=\"\(HTML.number(baseline - barHeight))\" "
            svg += "width=\"\(HTML.number(max(0.5, slot - gap)))\" height=\"\(HTML.number(barHeight))\">"
            let counted = bin.count == 1 ? countNameSingular : countName
            svg += "<title>\(HTML.escape(binName(bin))): \(bin.count) \(HTML.escape(counted))</title></rect>\n"
        }
        svg += "<line class=\"axis\" x1=\"\(HTML.number(Self.left))\" x2=\"\(HTML.number(w - Self.right))\" "
        svg += "y1=\"\(HTML.number(baseline))\" y2=\"\(HTML.number(baseline))\"/>\n"
        svg += xLabels(slot: slot, baseline: baseline)
        svg += "<text class=\"axis-title\" x=\"\(HTML.number(Self.left + plotWidth / 2))\" y=\"\(HTML.number(h - 6))\" "
        svg += "text-anchor=\"middle\">\(HTML.escape(valueAxis))</text>\n"
        svg += "<text class=\"axis-title\" transform=\"translate(12 \(HTML.number(Self.top + plotHeight / 2))) rotate(-90)\" "
        svg += "text-anchor=\"middle\">\(HTML.escape(countName))</text>\n"
        return svg + "</svg>"
    }

    /// Labels under the bars (one value per bin) or at the bin edges, at most about ten.
    private func xLabels(slot: Double, baseline: Double) -> String {
        let bins = histogram.bins
        guard !bins.isEmpty else { return "" }
        let every = max(1, Int((Double(bins.count) / 10).rounded(.up)))
        var svg = ""
        let y = HTML.number(baseline + 16)
        if oneValuePerBin {
            for (index, bin) in bins.enumerated() where index % every == 0 {
                let x = Self.left + (Double(index) + 0.5) * slot
                svg += "<text class=\"tick\" x=\"\(HTML.number(x))\" y=\"\(y)\" text-anchor=\"middle\">\(AxisTicks.label(bin.lower))</text>"
            }
        } else {
            for index in stride(from: 0, through: bins.count, by: every) {
                let x = Self.left + Double(index) * slot
                svg += "<text class=\"tick\" x=\"\(HTML.number(x))\" y=\"\(y)\" text-anchor=\"middle\">"
                svg += "\(AxisTicks.label(Double(index) * histogram.width))</text>"
            }
        }
        return svg + "\n"
    }

    private func binName(_ bin: Histogram.Bin) -> String {
        let unit = valueUnit.isEmpty ? "" : " " + valueUnit
        if oneValuePerBin { return AxisTicks.label(bin.lower) + unit }
        return "\(AxisTicks.label(bin.lower)) to under \(AxisTicks.label(bin.upper))\(unit)"
    }
}
