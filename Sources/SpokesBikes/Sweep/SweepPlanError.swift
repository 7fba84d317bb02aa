/// Why a sweep cannot be planned. Each message names the flag and the item at fault:
/// `--seeds: '7-3' is a descending range`.
public enum SweepPlanError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A parameter with no values at all.
    case emptyList(SweepParameter)
    /// `1,,2` or a trailing comma.
    case emptyItem(SweepParameter, list: String)
    case notAWholeNumber(SweepParameter, item: String)
    case notANumber(SweepParameter, item: String)
    /// `0.1-0.5`: only whole numbers have ranges.
    case rangeOfDecimals(SweepParameter, item: String)
    case descendingRange(SweepParameter, item: String)
    case outOfRange(SweepParameter, item: String, expected: String)
    /// A value listed twice (also through overlapping ranges): its runs would count twice.
    case duplicate(SweepParameter, value: String)
    /// More runs than ``SweepPlan/maximumRuns``; `count` is nil when it does not even fit an `Int`.
    case tooManyRuns(count: Int?, maximum: Int)
    case missing(SweepParameter)
    /// A setting `SimulationOptions.validate` refuses, such as a goal not in the network.
    case simulation(SimulationError)
    /// A network a sweep cannot use (an unknown bundled name, or impossible counts).
    case network(String)

    public var description: String {
        switch self {
        case .emptyList(let parameter):
            "\(parameter): no values given"
        case .emptyItem(let parameter, let list):
            "\(parameter): empty item in '\(list)' (write values separated by commas: 1,2,5-8)"
        case .notAWholeNumber(let parameter, let item):
            "\(parameter): '\(item)' is not a whole number"
        case .notANumber(let parameter, let item):
            "\(parameter): '\(item)' is not a number"
        case .rangeOfDecimals(let parameter, let item):
            "\(parameter): '\(item)' is a range, and ranges are for whole numbers only (list the values: 0.1,0.2)"
        case .descendingRange(let parameter, let item):
            "\(parameter): '\(item)' is a descending range"
        case .outOfRange(let parameter, let item, let expected):
            "\(parameter): '\(item)' is out of range; expected \(expected)"
        case .duplicate(let parameter, let value):
            "\(parameter): \(value) is listed more than once"
        case .tooManyRuns(let count, let maximum):
            "the sweep has \(count.map { "\($0)" } ?? "too many") runs; at most \(maximum) are allowed"
        case .missing(let parameter):
            "\(parameter) is required (for example \(parameter) 1-32)"
        case .simulation(let error):
            "\(error)"
        case .network(let reason):
            reason
        }
    }
}
