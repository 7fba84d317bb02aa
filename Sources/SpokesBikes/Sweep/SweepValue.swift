/// One value of a sweep parameter, for labels and ordering: a whole number, a decimal
/// number, or a goal station (none when users ride every path).
public enum SweepValue: Sendable, Hashable, Comparable, CustomStringConvertible {
    case integer(Int)
    case number(Double)
    case station(String?)

    /// `200`, `0.1`, `b5262607...`, `none`.
    public var description: String {
        switch self {
        case .integer(let value): "\(value)"
        case .number(let value): value.formatted
        case .station(let id): id ?? "none"
        }
    }

    /// Numbers ascending; no goal before any station, stations by id.
    public static func < (left: SweepValue, right: SweepValue) -> Bool {
        switch (left, right) {
        case (.integer(let a), .integer(let b)): a < b
        case (.number(let a), .number(let b)): a < b
        case (.station(nil), .station(let b)): b != nil
        case (.station(let a?), .station(let b?)): a < b
        case (.station, .station): false
        case (.integer, _): true
        case (.number, .station): true
        default: false
        }
    }
}
