/// Header fields in the order they were received or added. Names keep their case but are
/// looked up ignoring it, as RFC 9110 says; a name may appear more than once.
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral, Equatable, CustomStringConvertible {
    public typealias Element = (name: String, value: String)

    private var fields: [Element]

    public init(_ fields: [(String, String)] = []) {
        self.fields = fields.map { (name: $0.0, value: $0.1) }
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    public var count: Int { fields.count }
    public var isEmpty: Bool { fields.isEmpty }

    public func makeIterator() -> IndexingIterator<[Element]> { fields.makeIterator() }

    /// The value of the first field called `name`.
    public func first(_ name: String) -> String? {
        fields.first { HTTPSyntax.equalsIgnoringCase($0.name, name) }?.value
    }

    /// The values of every field called `name`, in order (one per field line; a
    /// comma-separated value is not split).
    public func values(_ name: String) -> [String] {
        fields.filter { HTTPSyntax.equalsIgnoringCase($0.name, name) }.map(\.value)
    }

    public func contains(_ name: String) -> Bool {
        fields.contains { HTTPSyntax.equalsIgnoringCase($0.name, name) }
    }

    /// True when the comma-separated values of `name` contain `token`, ignoring case:
    /// `Connection: keep-alive, Upgrade` contains `upgrade`.
    public func containsToken(_ token: String, in name: String) -> Bool {
        HTTPSyntax.listElements(values(name)).contains { HTTPSyntax.equalsIgnoringCase($0, token) }
    }

    /// Appends a field, after any with the same name.
    public mutating func add(name: String, value: String) {
        fields.append((name: name, value: value))
    }

    /// Replaces every field called `name` with one field holding `value`, where the first
    /// of them was (or at the end).
    public mutating func replaceOrAdd(name: String, value: String) {
        if let index = fields.firstIndex(where: { HTTPSyntax.equalsIgnoringCase($0.name, name) }) {
            fields[index].value = value
            fields = fields.enumerated().filter { $0.offset <= index || !HTTPSyntax.equalsIgnoringCase($0.element.name, name) }.map(\.element)
        } else {
            add(name: name, value: value)
        }
    }

    /// Removes every field called `name`.
    public mutating func remove(_ name: String) {
        fields.removeAll { HTTPSyntax.equalsIgnoringCase($0.name, name) }
    }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.count == rhs.fields.count && zip(lhs.fields, rhs.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    public var description: String {
        fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    }
}
