/// A number from a peer (a handshake field, a call argument, a task's input) outside the
/// range this node accepts for it. The node refuses the message or call with this error,
/// which the peer reads as a sentence, counts it (``Rejection/valueOutOfRange``), and
/// carries on: numbers are checked where they enter, before they reach arithmetic that
/// could overflow or a conversion that could trap.
///
/// JSON cannot carry NaN or infinity, and a number beyond `Double`'s range (`1e309`) or
/// an integer field's range fails to decode (an error reply, or a closed connection for
/// a frame). What decodes is checked here: negatives, zeros, and finite but huge values
/// such as `1e300`.
public struct OutOfRange: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// What the number is, e.g. `deadline`.
    public var name: String
    /// The number as it came.
    public var value: String
    /// What is accepted, e.g. `0.001 to 1000000 seconds`.
    public var expected: String

    public init(name: String, value: String, expected: String) {
        self.name = name
        self.value = value
        self.expected = expected
    }

    public var description: String { "\(name) is \(value); this node accepts \(expected)" }

    /// Throws unless `value` is a finite number in `range`.
    public static func check(_ name: String, _ value: Double, in range: ClosedRange<Double>, unit: String = "") throws(OutOfRange) {
        guard value.isFinite, range.contains(value) else {
            throw OutOfRange(name: name, value: "\(value)", expected: "\(describe(range.lowerBound)) to \(describe(range.upperBound))\(unit)")
        }
    }

    /// Throws unless `value` is in `range`.
    public static func check<Number: BinaryInteger>(_ name: String, _ value: Number, in range: ClosedRange<Number>) throws(OutOfRange) {
        guard range.contains(value) else {
            throw OutOfRange(name: name, value: "\(value)", expected: "\(range.lowerBound) to \(range.upperBound)")
        }
    }

    /// "0.001", "1000000": no exponent and no trailing ".0" for the bounds people read.
    private static func describe(_ bound: Double) -> String {
        bound.rounded() == bound && abs(bound) < 1e15 ? String(Int64(bound)) : String(bound)
    }
}
