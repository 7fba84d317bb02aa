/// Text made safe for HTML and inline SVG.
///
/// Everything a user or a peer controls (station, network and node names, job ids,
/// failure reasons) goes through ``escape(_:)`` before it reaches a page, in element
/// content and in attribute values alike.
enum HTML {
    /// `text` with `&`, `<`, `>`, `"` and `'` replaced by character references, so it can
    /// stand in element content and in a quoted attribute value.
    static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    /// A number for an SVG attribute: at most two decimals, no trailing zeros, never
    /// `nan` or `inf` (those become 0; magnitudes are capped at 10^12), and the same text on
    /// every machine.
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        let hundredths = (min(max(value, -1e12), 1e12) * 100).rounded()
        if hundredths == 0 { return "0" }
        let negative = hundredths < 0
        let magnitude = Int(abs(hundredths))
        let whole = magnitude / 100
        let fraction = magnitude % 100
        var text = negative ? "-\(whole)" : "\(whole)"
        if fraction != 0 {
            text += fraction % 10 == 0 ? ".\(fraction / 10)" : (fraction < 10 ? ".0\(fraction)" : ".\(fraction)")
        }
        return text
    }
}
