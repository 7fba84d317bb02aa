/// One colour per node, the same wherever a node appears: the page's members table,
/// job splits and task stream rows, and a report's per-node bars.
///
/// Nodes take colours in the order of their names (sorted), so every view of the same
/// set of nodes agrees. The colours are Tableau 10 without its red, which the page keeps
/// for failures.
enum NodePalette {
    static let colors = [
        "#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#9c755f", "#ff9da7", "#bab0ac",
    ]

    /// Node name -> colour, for `names` in sorted order (cycling when there are more
    /// nodes than colours).
    static func colors(for names: some Sequence<String>) -> [String: String] {
        var result: [String: String] = [:]
        for (index, name) in Set(names).sorted().enumerated() {
            result[name] = colors[index % colors.count]
        }
        return result
    }

    /// The colours as a JavaScript array literal, for the page.
    static var javascriptArray: String {
        "[" + colors.map { "'\($0)'" }.joined(separator: ", ") + "]"
    }
}
