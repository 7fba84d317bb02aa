/// Checks that an HTML page's elements nest: every opened element is closed in order,
/// except HTML's void elements, and SVG's self-closed ones (`<line .../>`).
enum MarkupBalance {
    static let voidElements: Set<String> = ["meta", "br", "hr", "img", "input", "link", "source", "wbr", "col", "area", "base"]

    /// Nil when the markup nests; otherwise what is wrong first.
    static func problem(in html: String) -> String? {
        var open: [String] = []
        let tag = /<(\/?)([a-zA-Z][a-zA-Z0-9-]*)((?:[^>"']|"[^"]*"|'[^']*')*?)(\/?)>/
        for match in html.matches(of: tag) {
            let name = match.output.2.lowercased()
            if !match.output.1.isEmpty {
                guard let last = open.popLast() else { return "</\(name)> closes nothing" }
                guard last == name else { return "</\(name)> closes <\(last)>" }
            } else if match.output.4.isEmpty && !voidElements.contains(name) {
                open.append(name)
            }
        }
        return open.isEmpty ? nil : "never closed: \(open)"
    }
}
