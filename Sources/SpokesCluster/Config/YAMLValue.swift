/// A node of a parsed YAML document, each with the location it starts at so that
/// whoever interprets the document can point at the exact place of a bad value.
///
/// Scalars stay text whatever they look like (`80`, `"80"` and `'80'` are all
/// `.scalar("80", …)`): deciding what a scalar means is the reader's job. Only an
/// absent value (`key:` with nothing below it) and the plain scalars `~` and `null`
/// are `.null`.
public enum YAMLValue: Sendable, Hashable {
    /// One `key: value` pair of a mapping.
    public struct Entry: Sendable, Hashable {
        public var key: String
        public var value: YAMLValue
        public var keyLocation: YAMLLocation

        public init(key: String, value: YAMLValue, keyLocation: YAMLLocation) {
            self.key = key
            self.value = value
            self.keyLocation = keyLocation
        }
    }

    case scalar(String, YAMLLocation)
    case sequence([YAMLValue], YAMLLocation)
    /// Entries in document order; keys are unique (the parser rejects duplicates).
    case mapping([Entry], YAMLLocation)
    case null(YAMLLocation)

    /// Where the value starts; for `.null`, just after the `:` or `-` that lacks a value.
    public var location: YAMLLocation {
        switch self {
        case .scalar(_, let location), .sequence(_, let location), .mapping(_, let location), .null(let location):
            location
        }
    }

    /// The value of `key` if this is a mapping that has it.
    public subscript(key: String) -> YAMLValue? {
        guard case .mapping(let entries, _) = self else { return nil }
        return entries.first { $0.key == key }?.value
    }
}
