import FoundationEssentials
import SpokesConcurrency

/// Users per node as horizontal bars, each in its node's ``NodePalette`` colour, with
/// the count and the percentage of all.
struct NodeShareSVG {
    /// Node name -> users whose result it produced.
    let shares: [String: Int]
    /// What is counted, plural: `users`, or `runs` for a sweep.
    var countName = "users"

    static let width = 720.0
    private static let rowHeight = 26.0, labelWidth = 160.0, valueWidth = 120.0

    func svg(label: String) -> String {
        let rows = shares.sorted { $0.key < $1.key }
        let total = rows.reduce(0) { $0 + max(0, $1.value) }
        let largest = rows.map(\.value).max() ?? 0
        let colors = NodePalette.colors(for: rows.map(\.key))
        let height = Double(max(1, rows.count)) * Self.rowHeight + 6
        let barSpace = Self.width - Self.labelWidth - Self.valueWidth
        var svg = """
            <svg class="chart nodes" viewBox="0 0 \(HTML.number(Self.width)) \(HTML.number(height))" \
            width="\(HTML.number(Self.width))" height="\(HTML.number(height))" role="img" \
            aria-label="\(HTML.escape(label))" xmlns="http://www.w3.org/2000/svg">

            """
        for (index, row) in rows.enumerated() {
            let y = 3 + Double(index) * Self.rowHeight
            let length = largest > 0 ? Double(max(0, row.value)) / Double(largest) * barSpace : 0
            let percent = total > 0 ? Double(max(0, row.value)) / Double(total) * 100 : 0
            let name = HTML.escape(row.key)
            svg += "<g class=\"node-row\" data-node=\"\(name)\"><title>\(name): \(row.value) \(countName)</title>"
            svg += "<text class=\"label\" x=\"\(HTML.number(Self.labelWidth - 10))\" y=\"\(HTML.number(y + 16))\" "
            svg += "text-anchor=\"end\">\(name)</text>"
            svg += "<rect class=\"track\" x=\"\(HTML.number(Self.labelWidth))\" y=\"\(HTML.number(y + 4))\" "
            svg += "width=\"\(HTML.number(barSpace))\" height=\"16\" rx=\"3\"/>"
            svg += "<rect x=\"\(HTML.number(Self.labelWidth))\" y=\"\(HTML.number(y + 4))\" width=\"\(HTML.number(length))\" "
            svg += "height=\"16\" rx=\"3\" fill=\"\(colors[row.key] ?? NodePalette.colors[0])\"/>"
            svg += "<text class=\"value\" x=\"\(HTML.number(Self.labelWidth + barSpace + 10))\" y=\"\(HTML.number(y + 16))\">"
            svg += "\(row.value) (\(String(printf: "%.1f", percent))%)</text></g>\n"
        }
        return svg + "</svg>"
    }
}
