/// The list syntax every sweep parameter shares: values separated by commas, and for
/// whole numbers `a-b` ranges (both ends included), mixed freely: `1-4,8,16-32`.
///
/// Spaces around items are ignored. Values keep the order they are written in (it is
/// the order of the runs). A value may appear once: `1-4,3` is refused, since its runs
/// would count twice in the statistics. Station ids (`--goal`) have no ranges, because
/// ids may contain dashes. A list may hold at most ``SweepPlan/maximumRuns`` values, and
/// a range that would exceed it is refused before anything is expanded.
public enum SweepList {
    /// Whole numbers for `users`, `paths` or `seed`, each within the parameter's
    /// ``SweepParameter/integerRange``.
    public static func integers(
        _ text: String, for parameter: SweepParameter, maximumCount: Int = SweepPlan.maximumRuns
    ) throws(SweepPlanError) -> [Int] {
        let allowed = parameter.integerRange ?? Int.min...Int.max
        var values: [Int] = []
        var seen = Set<Int>()
        for item in try items(text, for: parameter) {
            let (low, high) = try bounds(item, for: parameter)
            for end in [low, high] where !allowed.contains(end) {
                throw .outOfRange(parameter, item: item, expected: expected(allowed))
            }
            guard low <= high else { throw .descendingRange(parameter, item: item) }
            let (span, overflow) = high.subtractingReportingOverflow(low)
            guard !overflow, span < maximumCount - values.count else {
                let fits = !overflow && span < Int.max - values.count
                throw .tooManyRuns(count: fits ? values.count + span + 1 : nil, maximum: maximumCount)
            }
            for value in low...high {
                guard seen.insert(value).inserted else { throw .duplicate(parameter, value: "\(value)") }
                values.append(value)
            }
        }
        return values
    }

    /// Decimal numbers for `moveTime` or `timeScale` (`0.1`, `2`, `1e-3`), each within
    /// the parameter's ``SweepParameter/numberRange``.
    public static func numbers(
        _ text: String, for parameter: SweepParameter, maximumCount: Int = SweepPlan.maximumRuns
    ) throws(SweepPlanError) -> [Double] {
        let allowed = parameter.numberRange ?? -Double.greatestFiniteMagnitude...Double.greatestFiniteMagnitude
        var values: [Double] = []
        var seen = Set<Double>()
        for item in try items(text, for: parameter) {
            guard let value = decimal(item) else {
                if item.dropFirst().contains("-") && !item.contains(where: { $0 == "e" || $0 == "E" }) {
                    throw .rangeOfDecimals(parameter, item: item)
                }
                throw .notANumber(parameter, item: item)
            }
            guard allowed.contains(value) else {
                throw .outOfRange(
                    parameter, item: item,
                    expected: "a number from \(allowed.lowerBound.formatted) to \(allowed.upperBound.formatted)")
            }
            guard seen.insert(value).inserted else { throw .duplicate(parameter, value: item) }
            guard values.count < maximumCount else { throw .tooManyRuns(count: values.count + 1, maximum: maximumCount) }
            values.append(value)
        }
        return values
    }

    /// Station ids for `goal`, as written (no ranges).
    public static func stationIDs(
        _ text: String, for parameter: SweepParameter = .goal, maximumCount: Int = SweepPlan.maximumRuns
    ) throws(SweepPlanError) -> [String] {
        var values: [String] = []
        var seen = Set<String>()
        for item in try items(text, for: parameter) {
            guard seen.insert(item).inserted else { throw .duplicate(parameter, value: "'\(item)'") }
            guard values.count < maximumCount else { throw .tooManyRuns(count: values.count + 1, maximum: maximumCount) }
            values.append(item)
        }
        return values
    }

    /// The items between commas, trimmed; none may be empty.
    static func items(_ text: String, for parameter: SweepParameter) throws(SweepPlanError) -> [String] {
        let trimmed = text.trimmingSpaces
        guard !trimmed.isEmpty else { throw .emptyList(parameter) }
        let items = trimmed.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmingSpaces }
        guard !items.contains(where: \.isEmpty) else { throw .emptyItem(parameter, list: trimmed) }
        return items
    }

    /// `7` -> (7, 7); `1-4` -> (1, 4). A leading minus belongs to the number (`-3` is
    /// minus three, refused later as out of range), so a range's dash is the first one
    /// after the first character.
    private static func bounds(_ item: String, for parameter: SweepParameter) throws(SweepPlanError) -> (Int, Int) {
        guard let dash = item.dropFirst().firstIndex(of: "-") else {
            let value = try wholeNumber(item, in: item, for: parameter)
            return (value, value)
        }
        let low = String(item[..<dash]).trimmingSpaces
        let high = String(item[item.index(after: dash)...]).trimmingSpaces
        guard !low.isEmpty, !high.isEmpty else { throw .notAWholeNumber(parameter, item: item) }
        return (try wholeNumber(low, in: item, for: parameter), try wholeNumber(high, in: item, for: parameter))
    }

    /// Digits with an optional sign. Digits too many for an `Int` are out of range, not
    /// "not a number".
    private static func wholeNumber(_ text: String, in item: String, for parameter: SweepParameter) throws(SweepPlanError) -> Int {
        let digits = text.first == "-" || text.first == "+" ? text.dropFirst() : Substring(text)
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw .notAWholeNumber(parameter, item: item)
        }
        guard let value = Int(text) else {
            throw .outOfRange(parameter, item: item, expected: expected(parameter.integerRange ?? Int.min...Int.max))
        }
        return value
    }

    /// A finite decimal number in plain or exponent notation; nil for anything else
    /// (`inf`, `nan` and hexadecimal floats included, which `Double(_:)` would accept).
    private static func decimal(_ text: String) -> Double? {
        guard text.allSatisfy({ $0.isASCII && ($0.isNumber || "+-.eE".contains($0)) }),
              text.contains(where: \.isNumber), let value = Double(text), value.isFinite else { return nil }
        return value
    }

    private static func expected(_ range: ClosedRange<Int>) -> String {
        range.upperBound == Int.max ? "at least \(range.lowerBound)" : "\(range.lowerBound) to \(range.upperBound)"
    }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return String(slice)
    }
}
