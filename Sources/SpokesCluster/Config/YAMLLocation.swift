/// A position in a YAML text: 1-based line and 1-based column, counted in Unicode scalars.
public struct YAMLLocation: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var line: Int
    public var column: Int

    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    /// `line:column`, as it appears in error messages.
    public var description: String { "\(line):\(column)" }

    public static func < (lhs: YAMLLocation, rhs: YAMLLocation) -> Bool {
        (lhs.line, lhs.column) < (rhs.line, rhs.column)
    }
}
