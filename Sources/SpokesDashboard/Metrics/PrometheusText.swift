/// The Prometheus text exposition format, version 0.0.4: metric families in, text out.
/// Pure: what `GET /metrics` answers, and what its tests parse back.
///
/// Each family is a `# HELP` line, a `# TYPE` line, then one line per sample:
/// `name{label="value",...} value` (a histogram's names end in `_bucket`, `_sum` and
/// `_count`). Help text escapes `\` and line feeds; label values
/// also escape `"`. Values are integers where they are whole, else the shortest decimal
/// that reads back the same; `NaN`, `+Inf` and `-Inf` as Prometheus writes them. A name
/// or label name outside the format's characters has them replaced by `_` (names are
/// written in code, so tests keep them right; this only keeps the output parseable).
public enum PrometheusText {
    /// The `Content-Type` of a scrape's answer in this format.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// The families as one exposition, ending with a line feed; families of the same name
    /// should not repeat (the caller's names are distinct).
    public static func render(_ families: [MetricFamily]) -> String {
        var text = ""
        for family in families {
            let name = sanitized(family.name, allowColon: true)
            text += "# HELP \(name) \(escapeHelp(family.help))\n"
            text += "# TYPE \(name) \(family.kind.rawValue)\n"
            for sample in family.samples {
                text += name
                if !sample.suffix.isEmpty { text += sanitized(sample.suffix, allowColon: true) }
                if !sample.labels.isEmpty {
                    text += "{" + sample.labels.map { "\(sanitized($0.name, allowColon: false))=\"\(escapeLabelValue($0.value))\"" }.joined(separator: ",") + "}"
                }
                text += " \(format(sample.value))\n"
            }
        }
        return text
    }

    /// Help text with `\` as `\\` and a line feed as `\n`.
    public static func escapeHelp(_ text: String) -> String {
        escape(text, quotes: false)
    }

    /// A label value with `\` as `\\`, `"` as `\"` and a line feed as `\n`.
    public static func escapeLabelValue(_ text: String) -> String {
        escape(text, quotes: true)
    }

    /// The format's escapes: `\`, line feeds, and (in label values) `"`.
    private static func escape(_ text: String, quotes: Bool) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"" where quotes: escaped += "\\\""
            case "\n", "\r\n": escaped += "\\n"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// `3`, `0.25`, `1e-05`, `NaN`, `+Inf`, `-Inf`.
    public static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 9_007_199_254_740_992 { return String(Int64(value)) }
        return "\(value)"
    }

    /// Whether `name` is a valid metric name (`allowColon`) or label name: ASCII letters,
    /// `_` (and `:`), then digits too.
    public static func isValidName(_ name: String, allowColon: Bool) -> Bool {
        !name.isEmpty && name.utf8.enumerated().allSatisfy { index, byte in isNameByte(byte, first: index == 0, allowColon: allowColon) }
    }

    private static func sanitized(_ name: String, allowColon: Bool) -> String {
        if isValidName(name, allowColon: allowColon) { return name }
        if name.isEmpty { return "_" }
        let bytes = name.utf8.enumerated().map { index, byte in isNameByte(byte, first: index == 0, allowColon: allowColon) ? byte : UInt8(ascii: "_") }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func isNameByte(_ byte: UInt8, first: Bool, allowColon: Bool) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"): true
        case UInt8(ascii: ":"): allowColon
        case UInt8(ascii: "0")...UInt8(ascii: "9"): !first
        default: false
        }
    }
}
