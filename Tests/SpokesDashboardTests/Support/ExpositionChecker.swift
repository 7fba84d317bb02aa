/// A small reader of the Prometheus text exposition format (version 0.0.4) that checks
/// its rules, for tests: what ``PrometheusText`` writes must pass it. Independent of the
/// renderer: it parses character by character and says what is wrong, line by line.
///
/// Checked: `# HELP` and `# TYPE` at most once per name and before the name's samples;
/// types known; a family's lines together; metric and label names of the format's
/// characters (no label starting `__`, none twice in a sample); label values quoted with
/// only `\\`, `\"` and `\n` escaped, help text with only `\\` and `\n`; values that
/// Prometheus reads (`NaN`, `+Inf`, `-Inf` included); no series twice; counters not
/// negative; the text ends with a line feed.
struct ExpositionChecker {
    struct Sample: Hashable {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    struct Family {
        var help: String?
        var type: String?
        var samples: [Sample] = []
    }

    private(set) var families: [String: Family] = [:]
    /// Family names in the order they first appeared.
    private(set) var order: [String] = []
    /// What breaks the format, as `line N: ...`; empty when the text is valid.
    private(set) var problems: [String] = []

    init(_ text: String) {
        if !text.isEmpty, !text.hasSuffix("\n") { problems.append("the text does not end with a line feed") }
        var finished: Set<String> = []
        var current: String?
        var series: Set<String> = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            if line.isEmpty { continue }
            func problem(_ what: String) { problems.append("line \(number): \(what): \(line)") }
            func enter(_ name: String) {
                if current != name {
                    if let current { finished.insert(current) }
                    if finished.contains(name) { problem("\(name) comes back after another family's lines") }
                    current = name
                }
                if families[name] == nil {
                    families[name] = Family()
                    order.append(name)
                }
            }
            if line.hasPrefix("#") {
                let parts = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
                guard parts.count >= 3, parts[0] == "#", parts[1] == "HELP" || parts[1] == "TYPE" else { continue }  // a comment
                let name = String(parts[2])
                guard Self.isMetricName(name) else {
                    problem("bad metric name '\(name)'")
                    continue
                }
                enter(name)
                let rest = parts.count > 3 ? String(parts[3]) : ""
                if parts[1] == "HELP" {
                    if families[name]?.help != nil { problem("a second HELP for \(name)") }
                    guard let help = Self.unescape(rest, allowQuote: false) else {
                        problem("bad escape in HELP")
                        continue
                    }
                    families[name]?.help = help
                } else {
                    if families[name]?.type != nil { problem("a second TYPE for \(name)") }
                    if !(families[name]?.samples.isEmpty ?? true) { problem("TYPE after samples of \(name)") }
                    if !["counter", "gauge", "histogram", "summary", "untyped"].contains(rest) { problem("unknown type '\(rest)'") }
                    families[name]?.type = rest
                }
                continue
            }
            guard let sample = Self.parseSample(Substring(line)) else {
                problem("not a sample line")
                continue
            }
            let family = families[sample.name] == nil && current.map({ Self.belongs(sample.name, to: $0, type: families[$0]?.type) }) == true ? current! : sample.name
            enter(family)
            let key = sample.name + "{" + sample.labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",") + "}"
            if !series.insert(key).inserted { problem("the series \(key) twice") }
            if families[family]?.type == "counter", sample.value < 0 || sample.value.isNaN { problem("a counter below zero") }
            families[family]?.samples.append(sample)
        }
    }

    /// The value of the series `name` with exactly `labels`, if there is one.
    func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        families.values.lazy.flatMap(\.samples).first { $0.name == name && $0.labels == labels }?.value
    }

    // MARK: - Reading

    static func isMetricName(_ name: some StringProtocol) -> Bool {
        guard let first = name.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic || first == "_" || first == ":" else { return false }
        return name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || $0 == ":") }
    }

    static func isLabelName(_ name: some StringProtocol) -> Bool {
        isMetricName(name) && !name.contains(":") && !name.hasPrefix("__")
    }

    /// A histogram's or summary's `_bucket`, `_sum`, `_count` lines belong to its family.
    static func belongs(_ sample: String, to family: String, type: String?) -> Bool {
        guard type == "histogram" || type == "summary" else { return false }
        return ["_bucket", "_sum", "_count"].contains { sample == family + $0 }
    }

    /// `name{a="b",c="d"} 1.5 [timestamp]`, or nil when the line is not one.
    static func parseSample(_ line: Substring) -> Sample? {
        var rest = line[...]
        let name = rest.prefix { $0 != "{" && $0 != " " }
        guard isMetricName(name) else { return nil }
        rest = rest.dropFirst(name.count)
        var labels: [String: String] = [:]
        if rest.first == "{" {
            rest = rest.dropFirst()
            while rest.first != "}" {
                let labelName = rest.prefix { $0 != "=" }
                guard isLabelName(labelName), labels[String(labelName)] == nil else { return nil }
                rest = rest.dropFirst(labelName.count)
                guard rest.first == "=" else { return nil }
                rest = rest.dropFirst()
                guard rest.first == "\"" else { return nil }
                rest = rest.dropFirst()
                var raw = ""
                var escaped = false
                var closed = false
                while let character = rest.popFirst() {
                    if escaped {
                        raw += "\\" + String(character)
                        escaped = false
                    } else if character == "\\" {
                        escaped = true
                    } else if character == "\"" {
                        closed = true
                        break
                    } else {
                        raw.append(character)
                    }
                }
                guard closed else { return nil }
                guard let value = unescape(raw, allowQuote: true) else { return nil }
                labels[String(labelName)] = value
                if rest.first == "," { rest = rest.dropFirst() } else if rest.first != "}" { return nil }
            }
            rest = rest.dropFirst()
        }
        guard rest.first == " " else { return nil }
        let fields = rest.dropFirst().split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 1 || (fields.count == 2 && Int64(fields[1]) != nil), let value = parseValue(fields[0]) else { return nil }
        return Sample(name: String(name), labels: labels, value: value)
    }

    /// A value as Prometheus reads it: a Go float, `NaN`, `+Inf`, `-Inf`.
    static func parseValue(_ text: Substring) -> Double? {
        switch text {
        case "NaN": return .nan
        case "+Inf", "Inf": return .infinity
        case "-Inf": return -.infinity
        default:
            guard !text.isEmpty, text.allSatisfy({ $0.isASCII && ($0.isNumber || "+-.eE".contains($0)) }) else { return nil }
            return Double(text)
        }
    }

    /// Undoes `\\` and `\n` (and `\"` where `allowQuote`); nil for any other escape.
    static func unescape(_ text: String, allowQuote: Bool) -> String? {
        var result = ""
        var escaped = false
        for character in text {
            if escaped {
                switch character {
                case "\\": result += "\\"
                case "n": result += "\n"
                case "\"" where allowQuote: result += "\""
                default: return nil
                }
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else {
                result.append(character)
            }
        }
        return escaped ? nil : result
    }
}
