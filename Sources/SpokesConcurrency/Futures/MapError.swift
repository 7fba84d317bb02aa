/// Why a failable mapping (``Future/flatMap(_:)``) failed: the source future failed,
/// or the mapping returned nil for a value.
public enum MapError<SourceValue: Sendable, SourceFailure: Error, Target>: Error, CustomStringConvertible {
    /// The source future failed with this error.
    case originalError(SourceFailure)
    /// The mapping could not turn this value into a `Target`.
    case mappingError(SourceValue)

    /// For a mapping error, e.g. `Could not map value: (3) to output type: String.`
    public var description: String {
        switch self {
        case .originalError(let error):
            "\(error)"
        case .mappingError(let value):
            "Could not map value: (\(value)) to output type: \(Target.self)."
        }
    }
}
